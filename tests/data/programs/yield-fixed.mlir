// RUN: asyncfuzz check-mlir %s
// EXPECT: pass
// yield.mlir with the missing wait added: the region's GPU work (in a function, which waits
// for its copy before it returns) yields no GPU token; the host awaits the region.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @fill(%out: memref<?xi32>, %v: i32) kernel {
      %i = gpu.thread_id x
      %ii = arith.index_cast %i : index to i32
      %x = arith.addi %v, %ii : i32
      memref.store %x, %out[%i] : memref<?xi32>
      gpu.return
    }
  }
  func.func private @printMemrefI32(memref<*xi32>) attributes {llvm.emit_c_interface}
  // The region's GPU work, waited for before it returns.
  func.func @work(%h: memref<?xi32>) {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %v = arith.constant 40 : i32
    %t0 = gpu.wait async
    %d, %t1 = gpu.alloc async [%t0] (%c4) : memref<?xi32>
    %t2 = gpu.launch_func async [%t1] @kernels::@fill blocks in (%c1, %c1, %c1)
        threads in (%c4, %c1, %c1) args(%d : memref<?xi32>, %v : i32)
    %t3 = gpu.memcpy async [%t2] %h, %d : memref<?xi32>, memref<?xi32>
    gpu.wait [%t3]
    %t5 = gpu.wait async
    %t6 = gpu.dealloc async [%t5] %d : memref<?xi32>
    gpu.wait [%t6]
    return
  }
  func.func @main() {
    %c4 = arith.constant 4 : index
    %h = memref.alloc(%c4) : memref<?xi32>
    %t = async.execute {
      func.call @work(%h) : (memref<?xi32>) -> ()
      async.yield
    }
    async.await %t : !async.token
    %u = memref.cast %h : memref<?xi32> to memref<*xi32>
    call @printMemrefI32(%u) : (memref<*xi32>) -> ()
    memref.dealloc %h : memref<?xi32>
    return
  }
}
