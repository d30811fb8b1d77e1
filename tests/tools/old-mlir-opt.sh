#!/bin/sh
# A test double: an mlir-opt from LLVM 17, as far as --version tells.
echo "LLVM (http://llvm.org/):"
echo "  LLVM version 17.0.6"
