// RUN: not asyncfuzz check-mlir %s --schedules eager,lazy | FileCheck %s
// CHECK: race: mlir-opt|race|host_read_before_complete|gpu.memcpy async deps=1->func.call @printMemrefF32
// EXPECT: race|host_read_before_complete|gpu.memcpy async deps=1->func.call @printMemrefF32
// EXPECT@async-region: misused-handle|stream|destroyed|at:gpu.wait
// A kernel fills a device buffer and the result is copied back to the host and printed, but
// the host prints before it waits for the copy: on a fast GPU the copy is usually done by
// then, on a slow one the print shows what the buffer held before.
// print-waited.mlir is the fixed twin.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @fill(%out: memref<?xf32>, %v: f32) kernel {
      %i = gpu.thread_id x
      memref.store %v, %out[%i] : memref<?xf32>
      gpu.return
    }
  }
  func.func private @printMemrefF32(memref<*xf32>) attributes {llvm.emit_c_interface}
  func.func @main() {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %v = arith.constant 2.5 : f32
    %h = memref.alloc(%c4) : memref<?xf32>
    %t0 = gpu.wait async
    %d, %t1 = gpu.alloc async [%t0] (%c4) : memref<?xf32>
    %t2 = gpu.launch_func async [%t1] @kernels::@fill blocks in (%c1, %c1, %c1)
        threads in (%c4, %c1, %c1) args(%d : memref<?xf32>, %v : f32)
    %t3 = gpu.memcpy async [%t2] %h, %d : memref<?xf32>, memref<?xf32>
    %u = memref.cast %h : memref<?xf32> to memref<*xf32>
    call @printMemrefF32(%u) : (memref<*xf32>) -> ()
    gpu.wait [%t3]
    %t5 = gpu.wait async
    %t6 = gpu.dealloc async [%t5] %d : memref<?xf32>
    gpu.wait [%t6]
    memref.dealloc %h : memref<?xf32>
    return
  }
}
