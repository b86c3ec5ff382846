//! The dispatch macro and the contract's vocabulary, on the CPU backend.

use super::*;
use crate::cpu::CpuBackend;
use crate::domain::check_ntt_len;

crate::dispatch_backend! {
    /// One backend, and one compiled out as a disabled feature's would be.
    enum Selected {
        Cpu(CpuBackend),
        #[cfg(any())]
        Absent(CpuBackend),
    }
}

#[test]
fn kinds_parse_and_print() {
    for (i, k) in BackendKind::ALL.into_iter().enumerate() {
        assert_eq!(k as usize, i, "ALL and NAMES in declaration order");
        assert_eq!(k.name().parse::<BackendKind>().unwrap(), k);
    }
    assert_eq!(BackendKind::Wgpu.to_string(), "wgpu");
    assert!(matches!("metal".parse::<BackendKind>(), Err(BackendError::UnknownBackend(_))));
}

#[test]
fn the_dispatch_forwards_to_the_variant() {
    let a = Selected::from(CpuBackend::new());
    let b = Selected::Cpu(CpuBackend::new());
    assert_ne!(a.id(), b.id());
    let mut buf = a.upload_scalars(&[Fr::from(3u64); 4]).unwrap();
    a.ntt(&mut buf, NttKind::Forward).unwrap();
    assert!(matches!(b.ntt(&mut buf, NttKind::Forward), Err(BackendError::ForeignBuffer { .. })));
    assert!(matches!(b.download_scalars(&buf), Err(BackendError::ForeignBuffer { .. })));
    assert_eq!(a.drain_device_spans().len(), 2, "upload and NTT");
}

#[test]
fn ntt_lengths_are_checked() {
    for bad in [0usize, 1, 3, 6, 100] {
        assert!(check_ntt_len(bad, 31).is_err(), "{bad}");
    }
    assert!(check_ntt_len(1 << 5, 4).is_err());
    assert!(check_ntt_len(2, 31).is_ok() && check_ntt_len(1 << 20, 31).is_ok());
}
