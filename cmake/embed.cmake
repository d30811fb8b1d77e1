# cmake -DIN=file -DOUT=file.c -DNAME=symbol -P embed.cmake: a C array holding the file's bytes
# and a terminating NUL (PTX text must end in one; a fat binary does not mind it).
file(READ "${IN}" hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," body "${hex}")
string(REGEX REPLACE "(0x[0-9a-f][0-9a-f],){16}" "\\0\n" body "${body}")
file(WRITE "${OUT}" "/* generated from ${NAME_OF_INPUT} by cmake/embed.cmake: do not edit */\n"
     "const unsigned char ${NAME}[] = {\n${body}0x00};\n")
