// RUN: not asyncfuzz check-mlir %s --schedules eager,lazy | FileCheck %s
// CHECK: race: mlir-opt|race|host_read_before_complete|gpu.memcpy async deps=1->memref.load
// EXPECT: race|host_read_before_complete|gpu.memcpy async deps=1->memref.load
// A copy back from the device, then the host loads an element of the buffer before it waits
// for the copy: a host load is a read like a print (check-mlir puts a read before each one).
module attributes {gpu.container_module} {
  func.func @main() {
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %v = arith.constant 7 : i32
    %h = memref.alloc(%c4) : memref<?xi32>
    %t0 = gpu.wait async
    %d, %t1 = gpu.alloc async [%t0] (%c4) : memref<?xi32>
    %t2 = gpu.memset async [%t1] %d, %v : memref<?xi32>, i32
    %t3 = gpu.memcpy async [%t2] %h, %d : memref<?xi32>, memref<?xi32>
    %x = memref.load %h[%c0] : memref<?xi32>
    gpu.wait [%t3]
    %t4 = gpu.wait async
    %t5 = gpu.dealloc async [%t4] %d : memref<?xi32>
    gpu.wait [%t5]
    memref.dealloc %h : memref<?xi32>
    return
  }
}
