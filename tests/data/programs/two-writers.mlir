// RUN: not asyncfuzz check-mlir %s --schedules eager,lazy | FileCheck %s
// CHECK: race: mlir-opt|race|data_race.WAW|gpu.launch_func async deps=1->gpu.launch_func async deps=1
// EXPECT: race|data_race.WAW|gpu.launch_func async deps=1->gpu.launch_func async deps=1
// Two kernels write the same device buffer from two streams with nothing ordering them: which
// one's values survive depends on the GPU. Found from the kernels' bodies alone (each stores
// to its first argument). two-buffers.mlir writes two different buffers and passes.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @set(%out: memref<?xi32>, %v: i32) kernel {
      %i = gpu.thread_id x
      memref.store %v, %out[%i] : memref<?xi32>
      gpu.return
    }
  }
  func.func @main() {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %v1 = arith.constant 1 : i32
    %v2 = arith.constant 2 : i32
    %t0 = gpu.wait async
    %a, %t1 = gpu.alloc async [%t0] (%c4) : memref<?xi32>
    %b, %t2 = gpu.alloc async [%t1] (%c4) : memref<?xi32>
    gpu.wait [%t2]
    %s1 = gpu.wait async
    %s2 = gpu.wait async
    %k1 = gpu.launch_func async [%s1] @kernels::@set blocks in (%c1, %c1, %c1)
        threads in (%c4, %c1, %c1) args(%a : memref<?xi32>, %v1 : i32)
    %k2 = gpu.launch_func async [%s2] @kernels::@set blocks in (%c1, %c1, %c1)
        threads in (%c4, %c1, %c1) args(%a : memref<?xi32>, %v2 : i32)
    gpu.wait [%k1]
    gpu.wait [%k2]
    %t5 = gpu.wait async
    %t6 = gpu.dealloc async [%t5] %a : memref<?xi32>
    %t7 = gpu.dealloc async [%t6] %b : memref<?xi32>
    gpu.wait [%t7]
    return
  }
}
