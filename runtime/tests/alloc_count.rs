//! The counting allocator (feature `counting-alloc`) counts this thread's requests and only
//! those. Without the feature this file is empty.
#![cfg(feature = "counting-alloc")]

use nagi_runtime::alloc_count::{CountingAlloc, count};

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

#[test]
fn counts_this_threads_allocations() {
    let (v, counts) = count(|| {
        let mut v: Vec<u64> = Vec::with_capacity(4);
        v.extend([1, 2, 3, 4, 5]);
        v
    });
    // One allocation and one reallocation when the fifth element does not fit.
    assert_eq!(counts.allocations, 2, "{counts:?}");
    assert_eq!(counts.bytes, 32 + 64, "{counts:?}");
    let (sum, counts) = count(|| v.iter().sum::<u64>());
    assert_eq!((sum, counts.allocations), (15, 0));
    // Another thread's allocations are its own.
    let (_, counts) = count(|| std::thread::spawn(|| vec![1u8; 1 << 20]).join().map(|v| v.len()));
    assert!(counts.bytes < 1 << 20, "only the spawn's own bookkeeping: {counts:?}");
}
