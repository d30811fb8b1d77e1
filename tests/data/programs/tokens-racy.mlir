// RUN: not asyncfuzz check-mlir %s --schedules eager,lazy | FileCheck %s
// CHECK: race: mlir-opt|race|data_race.RAW|gpu.memcpy async deps=1->gpu.launch async deps=1
// EXPECT: race|data_race.RAW|gpu.memcpy async deps=1->gpu.launch async deps=1
// EXPECT@async-region: misused-handle|stream|destroyed
// The kernel runs on a stream of its own (the token of a fresh gpu.wait async), not after the
// copy to the device: it may read the buffer before the copy has written it, on a slow GPU or
// a busy one. tokens.mlir is the fixed twin (the kernel depends on the copy's token).
module attributes {gpu.container_module} {
  func.func private @printMemrefF32(memref<*xf32>) attributes {llvm.emit_c_interface}
  func.func @main() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %c4 = arith.constant 4 : index
    %h = memref.alloc(%c4) : memref<?xf32>
    %f0 = arith.constant 0.0 : f32
    memref.store %f0, %h[%c0] : memref<?xf32>
    %f1 = arith.constant 1.0 : f32
    memref.store %f1, %h[%c1] : memref<?xf32>
    %f2 = arith.constant 2.0 : f32
    memref.store %f2, %h[%c2] : memref<?xf32>
    %f3 = arith.constant 3.0 : f32
    memref.store %f3, %h[%c3] : memref<?xf32>
    %t0 = gpu.wait async
    %d, %t1 = gpu.alloc async [%t0] (%c4) : memref<?xf32>
    %t2 = gpu.memcpy async [%t1] %d, %h : memref<?xf32>, memref<?xf32>
    %k0 = gpu.wait async
    %t3 = gpu.launch async [%k0] blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
        threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
      %x = memref.load %d[%tx] : memref<?xf32>
      %y = arith.addf %x, %x : f32
      memref.store %y, %d[%tx] : memref<?xf32>
      gpu.terminator
    }
    %t4 = gpu.memcpy async [%t3] %h, %d : memref<?xf32>, memref<?xf32>
    gpu.wait [%t2]
    gpu.wait [%t4]
    %t5 = gpu.wait async
    %t6 = gpu.dealloc async [%t5] %d : memref<?xf32>
    gpu.wait [%t6]
    %u = memref.cast %h : memref<?xf32> to memref<*xf32>
    call @printMemrefF32(%u) : (memref<*xf32>) -> ()
    memref.dealloc %h : memref<?xf32>
    return
  }
}
