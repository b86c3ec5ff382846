//! Large host buffers on transparent huge pages: a key's file and its decoded points are
//! gigabytes of fresh memory, and with 4 KiB pages the kernel's page faults (one a page, each
//! clearing it) bound reading them. On the 2-core machine, reading an 868 MB zkey into fresh
//! memory took 391 ms with 4 KiB pages and 239 ms with 2 MiB ones on one thread (215 against
//! 124 ms on two), and freeing it 25-44 ms against 2.
//!
//! Only advice: where the kernel has no transparent huge pages, or none are free, the buffers
//! are what they were. Linux only; elsewhere nothing is done.

/// Below this, a buffer spans too few huge pages to matter.
const WORTH_IT: usize = 4 << 20;
const HUGE_PAGE: usize = 2 << 20;

/// A vector of capacity `n` whose pages, once touched, are huge ones where the kernel can.
pub fn vec_with_capacity<T>(n: usize) -> Vec<T> {
    let v = Vec::with_capacity(n);
    advise(v.as_ptr() as usize, v.capacity() * std::mem::size_of::<T>());
    v
}

/// `len` zero bytes (the allocator's fresh pages, not yet touched), their pages huge once
/// they are written.
pub fn zeroed_bytes(len: usize) -> Vec<u8> {
    let v = vec![0u8; len];
    advise(v.as_ptr() as usize, len);
    v
}

/// Asks for huge pages over the whole 2 MiB pages inside `[start, start + len)`.
fn advise(start: usize, len: usize) {
    if len < WORTH_IT {
        return;
    }
    let first = start.next_multiple_of(HUGE_PAGE);
    let end = (start + len) / HUGE_PAGE * HUGE_PAGE;
    if end <= first {
        return;
    }
    #[cfg(target_os = "linux")]
    // SAFETY: MADV_HUGEPAGE changes how the kernel backs the range, never its contents; the
    // range lies inside one live allocation (the vector's), aligned to a page as madvise needs.
    // Its result is only advice taken or not: an error (EINVAL where the kernel has no huge
    // pages) leaves the range as it was.
    unsafe {
        libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The buffers are ordinary vectors: the capacity asked for, the bytes zero, small ones
    /// left alone, and writes across the advised range read back.
    #[test]
    fn advised_buffers_are_ordinary_vectors() {
        let mut v: Vec<u64> = vec_with_capacity(3 << 20);
        assert!(v.capacity() >= 3 << 20);
        v.extend((0..3u64 << 20).map(|i| i * 7));
        assert!(v.iter().enumerate().all(|(i, &x)| x == i as u64 * 7));
        let bytes = zeroed_bytes((9 << 20) + 5);
        assert_eq!(bytes.len(), (9 << 20) + 5);
        assert!(bytes.iter().all(|&b| b == 0));
        assert!(zeroed_bytes(0).is_empty() && vec_with_capacity::<u8>(10).capacity() >= 10);
    }
}
