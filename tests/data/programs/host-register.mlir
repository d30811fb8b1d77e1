// RUN: asyncfuzz check-mlir %s
// EXPECT: pass
// The host registers its buffer (gpu.host_register), so the copy back from the device into it
// is truly asynchronous, and waits on the copy's token before it prints: race-free.
// host-register-racy.mlir waits on the wrong token.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @scale(%buf: memref<?xi32>, %k: i32) kernel {
      %i = gpu.thread_id x
      %x = memref.load %buf[%i] : memref<?xi32>
      %y = arith.muli %x, %k : i32
      memref.store %y, %buf[%i] : memref<?xi32>
      gpu.return
    }
  }
  func.func private @printMemrefI32(memref<*xi32>) attributes {llvm.emit_c_interface}
  func.func @main() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %c4 = arith.constant 4 : index
    %c5 = arith.constant 5 : index
    %c6 = arith.constant 6 : index
    %c7 = arith.constant 7 : index
    %c8 = arith.constant 8 : index
    %k = arith.constant 3 : i32
    %h = memref.alloc(%c8) : memref<?xi32>
    %v0 = arith.constant 0 : i32
    memref.store %v0, %h[%c0] : memref<?xi32>
    %v1 = arith.constant 1 : i32
    memref.store %v1, %h[%c1] : memref<?xi32>
    %v2 = arith.constant 2 : i32
    memref.store %v2, %h[%c2] : memref<?xi32>
    %v3 = arith.constant 3 : i32
    memref.store %v3, %h[%c3] : memref<?xi32>
    %v4 = arith.constant 4 : i32
    memref.store %v4, %h[%c4] : memref<?xi32>
    %v5 = arith.constant 5 : i32
    memref.store %v5, %h[%c5] : memref<?xi32>
    %v6 = arith.constant 6 : i32
    memref.store %v6, %h[%c6] : memref<?xi32>
    %v7 = arith.constant 7 : i32
    memref.store %v7, %h[%c7] : memref<?xi32>
    %u = memref.cast %h : memref<?xi32> to memref<*xi32>
    gpu.host_register %u : memref<*xi32>
    %t0 = gpu.wait async
    %d, %t1 = gpu.alloc async [%t0] (%c8) : memref<?xi32>
    %t2 = gpu.memcpy async [%t1] %d, %h : memref<?xi32>, memref<?xi32>
    %t3 = gpu.launch_func async [%t2] @kernels::@scale blocks in (%c1, %c1, %c1)
        threads in (%c8, %c1, %c1) args(%d : memref<?xi32>, %k : i32)
    %t4 = gpu.memcpy async [%t3] %h, %d : memref<?xi32>, memref<?xi32>
    gpu.wait [%t4]
    call @printMemrefI32(%u) : (memref<*xi32>) -> ()
    %t5 = gpu.wait async
    %t6 = gpu.dealloc async [%t5] %d : memref<?xi32>
    gpu.wait [%t6]
    gpu.host_unregister %u : memref<*xi32>
    memref.dealloc %h : memref<?xi32>
    return
  }
}
