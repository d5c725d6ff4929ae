//! Layout descriptors built at run time for unit tests, laid out as the LLVM emitter lays the
//! types out (the C rules: each field at the next multiple of its alignment, the size a multiple
//! of the largest alignment; an option is a one-byte tag and then its payload). Every
//! descriptor is leaked, as program constants live for the process.

use super::json::{FieldDesc, TypeDesc};

fn leak(desc: TypeDesc) -> &'static TypeDesc {
    Box::leak(Box::new(desc))
}

fn plain(kind: u64, size: usize, align: usize) -> &'static TypeDesc {
    leak(TypeDesc::plain(kind, size, align))
}

fn round_up(n: usize, align: usize) -> usize {
    n.div_ceil(align) * align
}

/// `i32`.
pub(crate) fn i32() -> &'static TypeDesc {
    plain(0, 4, 4)
}

/// `i64`.
pub(crate) fn i64() -> &'static TypeDesc {
    plain(1, 8, 8)
}

/// `f64`.
pub(crate) fn f64() -> &'static TypeDesc {
    plain(2, 8, 8)
}

/// `bool`.
pub(crate) fn bool() -> &'static TypeDesc {
    plain(3, 1, 1)
}

/// `unit`.
pub(crate) fn unit() -> &'static TypeDesc {
    plain(4, 0, 1)
}

/// `String`.
pub(crate) fn string() -> &'static TypeDesc {
    plain(5, 24, 8)
}

/// `[T]`.
pub(crate) fn array(elem: &'static TypeDesc) -> &'static TypeDesc {
    leak(TypeDesc { inner: elem, ..*plain(6, 24, 8) })
}

/// `Time` (microseconds).
pub(crate) fn time() -> &'static TypeDesc {
    plain(nagi_abi::type_kind::TIME, 8, 8)
}

/// `Uuid` (its 16 bytes).
pub(crate) fn uuid() -> &'static TypeDesc {
    plain(nagi_abi::type_kind::UUID, 16, 8)
}

/// `Map<String, V>`: `{ keys, values, index }`.
pub(crate) fn map_string(value: &'static TypeDesc) -> &'static TypeDesc {
    leak(TypeDesc { inner: value, ..*plain(nagi_abi::type_kind::MAP_STRING, 56, 8) })
}

/// `Map<i64, V>`: as [`map_string`], with `i64` keys.
pub(crate) fn map_i64(value: &'static TypeDesc) -> &'static TypeDesc {
    leak(TypeDesc { inner: value, ..*plain(nagi_abi::type_kind::MAP_I64, 56, 8) })
}

/// `Option<T>`.
pub(crate) fn option(inner: &'static TypeDesc) -> &'static TypeDesc {
    let align = inner.align.max(1);
    let payload_offset = round_up(1, align);
    let size = round_up(payload_offset + inner.size, align);
    leak(TypeDesc { inner, payload_offset, ..*plain(7, size, align) })
}

/// A class named `name` with `fields` in declaration order.
pub(crate) fn class(name: &'static str, fields: &[(&'static str, &'static TypeDesc)]) -> &'static TypeDesc {
    let mut offset = 0;
    let mut align = 1;
    let mut list = Vec::new();
    for (field, ty) in fields {
        offset = round_up(offset, ty.align);
        list.push(FieldDesc { name: field.as_ptr(), name_len: field.len(), offset, ty: *ty });
        offset += ty.size;
        align = align.max(ty.align);
    }
    let count = list.len();
    let list: &'static [FieldDesc] = Box::leak(list.into_boxed_slice());
    leak(TypeDesc {
        fields: list.as_ptr(),
        field_count: count,
        name: name.as_ptr(),
        name_len: name.len(),
        ..*plain(8, round_up(offset, align), align)
    })
}

/// An enum named `name` with `variants` in declaration order, each with its payload's type
/// (`unit()` for none): an `i64` tag, then a payload area as large as the largest payload,
/// rounded to 8 bytes, as the LLVM emitter lays enums out.
pub(crate) fn enumeration(name: &'static str, variants: &[(&'static str, &'static TypeDesc)]) -> &'static TypeDesc {
    let payload_offset = 8;
    let payload = variants.iter().map(|(_, ty)| ty.size).max().unwrap_or(0);
    let list: Vec<FieldDesc> = variants
        .iter()
        .map(|(variant, ty)| FieldDesc {
            name: variant.as_ptr(),
            name_len: variant.len(),
            offset: payload_offset,
            ty: *ty,
        })
        .collect();
    let count = list.len();
    let list: &'static [FieldDesc] = Box::leak(list.into_boxed_slice());
    leak(TypeDesc {
        payload_offset,
        fields: list.as_ptr(),
        field_count: count,
        name: name.as_ptr(),
        name_len: name.len(),
        ..*plain(9, payload_offset + round_up(payload, 8), 8)
    })
}

/// The offset of field `i` of a class descriptor.
pub(crate) fn offset(class: &TypeDesc, i: usize) -> usize {
    class.fields()[i].offset
}

/// A frame's poll, as `cabi::service::PollFn`.
pub(crate) type PollFn = unsafe extern "C" fn(frame: *mut u8, cx: *mut u8) -> i32;

/// A `guarded_poll` written as the LLVM emitter writes it (`docs/c-abi.md`), in assembly so
/// that `_setjmp` is called from a frame that no compiler reasons about: the guard set around
/// the poll's own answer (0, 1, 2), or 3 when a trap jumped back to it.
///
/// # Safety
/// As the emitted function: `poll` and `frame` follow the frame protocol.
#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
pub(crate) unsafe fn guarded_poll(poll: PollFn, frame: *mut u8, cx: *mut u8) -> i32 {
    // SAFETY: forwarded from the caller.
    unsafe { nagi_test_guarded_poll(poll, frame, cx) }
}

#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
unsafe extern "C" {
    /// The function of the `global_asm!` below.
    pub(crate) fn nagi_test_guarded_poll(poll: PollFn, frame: *mut u8, cx: *mut u8) -> i32;
    /// glibc's `_setjmp`, which saves no signal mask.
    fn _setjmp(buf: *mut u8) -> i32;
}

// The System V calling convention: `poll`, `frame`, `cx` arrive in rdi, rsi, rdx and are kept in
// callee-saved registers (r12, r13, r14), the previous guard in rbx; a 512-byte jmp_buf lies at
// rsp, 16-byte aligned (5 pushes after the return address, then 512 bytes). `longjmp` restores
// rbx, rbp, r12-r15 and rsp as `_setjmp` saved them, so the trapped path finds the previous guard
// in rbx.
#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
std::arch::global_asm!(
    ".pushsection .text.nagi_test_guarded_poll,\"ax\",@progbits",
    ".p2align 4",
    ".globl nagi_test_guarded_poll",
    ".type nagi_test_guarded_poll,@function",
    "nagi_test_guarded_poll:",
    "push rbp",
    "mov rbp, rsp",
    "push rbx",
    "push r12",
    "push r13",
    "push r14",
    "sub rsp, 512",
    "mov r12, rdi",
    "mov r13, rsi",
    "mov r14, rdx",
    "mov rdi, rsp",
    "call {enter}",
    "mov rbx, rax",
    "mov rdi, rsp",
    "call {setjmp}",
    "test eax, eax",
    "jnz 2f",
    "mov rdi, r13",
    "mov rsi, r14",
    "call r12",
    "mov r12d, eax",
    "mov rdi, rbx",
    "call {leave}",
    "mov eax, r12d",
    "jmp 3f",
    "2:",
    "mov rdi, rbx",
    "call {leave}",
    "mov eax, 3",
    "3:",
    "add rsp, 512",
    "pop r14",
    "pop r13",
    "pop r12",
    "pop rbx",
    "pop rbp",
    "ret",
    ".size nagi_test_guarded_poll, .-nagi_test_guarded_poll",
    ".popsection",
    enter = sym super::guard::nagi_rt_guard_enter,
    setjmp = sym _setjmp,
    leave = sym super::guard::nagi_rt_guard_leave,
);

/// A new, empty statement argument list, made as emitted code makes one in a slot of its stack;
/// the slot is leaked (the statement consumes the list, not the slot: 24 bytes per statement of
/// a test).
pub(crate) fn sql_args() -> *mut crate::cabi::db::SqlArgs {
    let slot = Box::leak(Box::new(std::mem::MaybeUninit::<crate::cabi::db::SqlArgs>::uninit())).as_mut_ptr();
    // SAFETY: the slot is writable, aligned and holds no list.
    unsafe { crate::cabi::db::nagi_rt_sql_args(slot, 4) };
    slot
}
