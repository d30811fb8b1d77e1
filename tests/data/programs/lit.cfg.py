# lit configuration for these programs: `lit tests/data/programs` runs each file's RUN line
# (asyncfuzz check-mlir %s, FileCheck on what it prints). asyncfuzz, FileCheck and not must be
# on PATH (tests/check_mlir_test.sh puts the build's and LLVM 22's there).
import os
import lit.formats

config.name = "asyncfuzz-programs"
config.test_format = lit.formats.ShTest(execute_external=False)  # (lit's shell: `not`, pipes)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.environment["PATH"] = os.environ.get("PATH", "")
# (asyncfuzz's own settings go through: a sanitizer build's ASYNCFUZZ_RUNNER_PRELOAD, ...)
for k, v in os.environ.items():
    if k.startswith("ASYNCFUZZ_"):
        config.environment[k] = v
