// RUN: not asyncfuzz check-mlir %s --schedules eager,lazy | FileCheck %s
// CHECK: misused-handle|stream|wrong-kind|at:gpu.wait deps=1
// EXPECT: misused-handle|stream|wrong-kind|at:gpu.wait ; warn:leak|buffer
// An async.execute region allocates a device buffer, launches a kernel and copies the result
// to a host buffer, then yields the copy's token; the host awaits it, waits on the token and
// prints the buffer. Where the lowering yields the token without recording an event for it,
// the host's wait waits for nothing and the print reads before the copy: the stream handed
// to an event call is the finding (the race it lets happen is its consequence, as campaigns
// judge a run).
// (The device buffer is never freed: a leak, which check-mlir warns of by default.)
// yield-fixed.mlir is the fixed twin (the region waits itself before it ends).
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
  func.func @main() {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %v = arith.constant 40 : i32
    %h = memref.alloc(%c4) : memref<?xi32>
    %t, %r = async.execute -> !async.value<!gpu.async.token> {
      %t0 = gpu.wait async
      %d, %t1 = gpu.alloc async [%t0] (%c4) : memref<?xi32>
      %t2 = gpu.launch_func async [%t1] @kernels::@fill blocks in (%c1, %c1, %c1)
          threads in (%c4, %c1, %c1) args(%d : memref<?xi32>, %v : i32)
      %t3 = gpu.memcpy async [%t2] %h, %d : memref<?xi32>, memref<?xi32>
      async.yield %t3 : !gpu.async.token
    }
    %tok = async.await %r : !async.value<!gpu.async.token>
    gpu.wait [%tok]
    %u = memref.cast %h : memref<?xi32> to memref<*xi32>
    call @printMemrefI32(%u) : (memref<*xi32>) -> ()
    memref.dealloc %h : memref<?xi32>
    return
  }
}
