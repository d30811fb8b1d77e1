// Allocations of a layout other than the identity, which the case language does not make
// (docs/case-format.md, "Layouts"): gpu-to-llvm leaves each gpu.alloc as it is, and
// finalize-memref-to-llvm each memref.alloc (tests/mlir_matrix_test.sh checks that it still
// does, on LLVM 22 and 19).
func.func @f() {
  %t0 = gpu.wait async
  %m, %t1 = gpu.alloc async [%t0] () : memref<4x4xi32, strided<[4, 1]>>
  %m2, %t2 = gpu.alloc async [%t1] () : memref<4x2xi32, strided<[8, 1], offset: 2>>
  %t3 = gpu.dealloc async [%t2] %m : memref<4x4xi32, strided<[4, 1]>>
  gpu.wait [%t3]
  %h = memref.alloc() : memref<4x4xi32, strided<[4, 1]>>
  memref.dealloc %h : memref<4x4xi32, strided<[4, 1]>>
  return
}
