//! The LLVM emitter: verified Low → an LLVM module (inkwell) → textual IR or an object file.
//! Filled by the LLVM emitter issue; this crate holds no code yet.
