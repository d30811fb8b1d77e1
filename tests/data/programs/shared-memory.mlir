// RUN: asyncfuzz check-mlir %s
// EXPECT: pass
// tokens.mlir with dynamic shared memory: the kernel (a gpu.launch body given 16 bytes of
// dynamic shared memory) doubles each element through its thread's slot of it; the result comes
// back and is printed after the host waits for the last copy.
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
    %smem = arith.constant 16 : i32
    %t3 = gpu.launch async [%t2] blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
        threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) dynamic_shared_memory_size %smem {
      %sm = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      %slots = memref.view %sm[%c0][%sx] : memref<?xi8, #gpu.address_space<workgroup>> to memref<?xf32, #gpu.address_space<workgroup>>
      %x = memref.load %d[%tx] : memref<?xf32>
      %y = arith.addf %x, %x : f32
      memref.store %y, %slots[%tx] : memref<?xf32, #gpu.address_space<workgroup>>
      %z = memref.load %slots[%tx] : memref<?xf32, #gpu.address_space<workgroup>>
      memref.store %z, %d[%tx] : memref<?xf32>
      gpu.terminator
    }
    %t4 = gpu.memcpy async [%t3] %h, %d : memref<?xf32>, memref<?xf32>
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
