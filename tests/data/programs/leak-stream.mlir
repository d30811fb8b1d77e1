// RUN: asyncfuzz check-mlir %s | FileCheck %s
// CHECK: warnings:
// CHECK-NEXT: lifetime: mlir-opt|leak|stream
// EXPECT: pass ; warn:leak|stream
// A copy to the device and back, waited for and printed, as it should be; but a stream made
// for nothing (a gpu.wait async whose token nobody waits on) is never destroyed. A leak is a
// warning by default (--leaks=error makes it a failure).
module attributes {gpu.container_module} {
  func.func private @printMemrefF32(memref<*xf32>) attributes {llvm.emit_c_interface}
  func.func @main() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %c4 = arith.constant 4 : index
    %one = arith.constant 1.0 : f32
    %h = memref.alloc(%c4) : memref<?xf32>
    memref.store %one, %h[%c0] : memref<?xf32>
    memref.store %one, %h[%c1] : memref<?xf32>
    memref.store %one, %h[%c2] : memref<?xf32>
    memref.store %one, %h[%c3] : memref<?xf32>
    %spare = gpu.wait async
    %t0 = gpu.wait async
    %d, %t1 = gpu.alloc async [%t0] (%c4) : memref<?xf32>
    %t2 = gpu.memcpy async [%t1] %d, %h : memref<?xf32>, memref<?xf32>
    %t3 = gpu.memcpy async [%t2] %h, %d : memref<?xf32>, memref<?xf32>
    gpu.wait [%t3]
    %t4 = gpu.wait async
    %t5 = gpu.dealloc async [%t4] %d : memref<?xf32>
    gpu.wait [%t5]
    %u = memref.cast %h : memref<?xf32> to memref<*xf32>
    call @printMemrefF32(%u) : (memref<*xf32>) -> ()
    memref.dealloc %h : memref<?xf32>
    return
  }
}
