// RUN: asyncfuzz check-mlir %s
// EXPECT: pass
// A ranked device buffer, memref<?x4xi32> (its row count dynamic): the host's buffer is copied
// into it through memref.expand_shape, the kernel takes it flattened (memref.collapse_shape),
// and it is copied back flattened; every copy waited on: race-free.
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
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c8 = arith.constant 8 : index
    %k = arith.constant 3 : i32
    %h = memref.alloc(%c8) : memref<?xi32>
    %i0 = arith.constant 0 : index
    %v0 = arith.constant 5 : i32
    memref.store %v0, %h[%i0] : memref<?xi32>
    %i1 = arith.constant 1 : index
    %v1 = arith.constant 6 : i32
    memref.store %v1, %h[%i1] : memref<?xi32>
    %i2 = arith.constant 2 : index
    %v2 = arith.constant 7 : i32
    memref.store %v2, %h[%i2] : memref<?xi32>
    %i3 = arith.constant 3 : index
    %v3 = arith.constant 8 : i32
    memref.store %v3, %h[%i3] : memref<?xi32>
    %i4 = arith.constant 4 : index
    %v4 = arith.constant 9 : i32
    memref.store %v4, %h[%i4] : memref<?xi32>
    %i5 = arith.constant 5 : index
    %v5 = arith.constant 10 : i32
    memref.store %v5, %h[%i5] : memref<?xi32>
    %i6 = arith.constant 6 : index
    %v6 = arith.constant 11 : i32
    memref.store %v6, %h[%i6] : memref<?xi32>
    %i7 = arith.constant 7 : index
    %v7 = arith.constant 12 : i32
    memref.store %v7, %h[%i7] : memref<?xi32>
    %t0 = gpu.wait async
    %d, %t1 = gpu.alloc async [%t0] (%c2) : memref<?x4xi32>
    %he = memref.expand_shape %h [[0, 1]] output_shape [%c2, 4] : memref<?xi32> into memref<?x4xi32>
    %t2 = gpu.memcpy async [%t1] %d, %he : memref<?x4xi32>, memref<?x4xi32>
    %df = memref.collapse_shape %d [[0, 1]] : memref<?x4xi32> into memref<?xi32>
    %t3 = gpu.launch_func async [%t2] @kernels::@scale blocks in (%c1, %c1, %c1)
        threads in (%c8, %c1, %c1) args(%df : memref<?xi32>, %k : i32)
    %t4 = gpu.memcpy async [%t3] %h, %df : memref<?xi32>, memref<?xi32>
    gpu.wait [%t4]
    %u = memref.cast %h : memref<?xi32> to memref<*xi32>
    call @printMemrefI32(%u) : (memref<*xi32>) -> ()
    %t5 = gpu.wait async
    %t6 = gpu.dealloc async [%t5] %d : memref<?x4xi32>
    gpu.wait [%t6]
    memref.dealloc %h : memref<?xi32>
    return
  }
}
