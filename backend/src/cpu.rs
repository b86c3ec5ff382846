//! The CPU backend: the reference every other backend is checked against, and the fallback.
//!
//! It is arkworks, multi-threaded with rayon: `ark-poly` radix-2 domains for the NTTs and
//! `VariableBaseMSM` for the MSMs, `BatchMulPreprocessing` (the fixed-base windowed method
//! arkworks' Groth16 setup uses) for fixed-base multiplications. Its "device" is the host, so its device spans are host
//! times with a zero error bound; they still nest under the prover's spans, which lets the
//! report show how much of a step was compute and how much was staging and bookkeeping.

use std::sync::Mutex;

use ark_ec::scalar_mul::BatchMulPreprocessing;
use ark_ec::VariableBaseMSM;
use rayon::prelude::*;

use crate::domain::{ntt_in_place, MAX_NTT_LOG2};
use crate::buffer::{check_range, BackendId, DeviceBuffer, Element, G1Bases, G2Bases, ScalarBuffer, Scalars};
use crate::contract::{Backend, BackendInfo};
use crate::domain::{check_ntt_len, NttKind};
use crate::error::{BackendError, BackendKind, BackendResult};
use crate::sparse::{check_spmv, MatrixBuffer, SparseMatrix};
use crate::timeline::{current_span, now_ns, DeviceSpan};
use crate::curve::{Fr, G1Affine, G1Projective, G2Affine, G2Projective};


pub struct CpuBackend {
    id: BackendId,
    device: String,
    spans: Mutex<Vec<DeviceSpan>>,
}

impl Default for CpuBackend {
    fn default() -> Self {
        Self::new()
    }
}

impl CpuBackend {
    pub fn new() -> Self {
        let threads = rayon::current_num_threads();
        let device =
            format!("{} ({} threads)", cpu_model().unwrap_or_else(|| std::env::consts::ARCH.to_string()), threads);
        CpuBackend { id: BackendId::fresh(), device, spans: Mutex::new(Vec::new()) }
    }

    /// Runs `work` as one device span named `name`, parented to the caller's current span.
    fn timed<R>(&self, name: &str, work: impl FnOnce() -> R) -> R {
        let parent = current_span();
        let start_ns = now_ns();
        let out = work();
        let end_ns = now_ns();
        let span = DeviceSpan {
            name: name.to_string(),
            parent,
            start_ns,
            end_ns,
            error_bound_ns: 0,
            device: "cpu".to_string(),
        };
        // A poisoned lock only means another thread panicked mid-push; the spans are still usable.
        self.spans.lock().unwrap_or_else(|p| p.into_inner()).push(span);
        out
    }

    fn wrap<T: Element>(&self, v: Vec<T>) -> DeviceBuffer<T> {
        DeviceBuffer::new(self.id, v.len(), Box::new(v))
    }

    fn vec<'a, T: Element>(&self, buf: &'a DeviceBuffer<T>) -> BackendResult<&'a Vec<T>> {
        buf.storage::<Vec<T>>(self.id)
    }

    fn vec_mut<'a, T: Element>(&self, buf: &'a mut DeviceBuffer<T>) -> BackendResult<&'a mut Vec<T>> {
        buf.storage_mut::<Vec<T>>(self.id)
    }

    /// Two same-length scalar buffers, the first mutable.
    fn pair<'a>(
        &self,
        op: &'static str,
        a: &'a mut ScalarBuffer,
        b: &'a ScalarBuffer,
    ) -> BackendResult<(&'a mut Vec<Fr>, &'a Vec<Fr>)> {
        if a.len() != b.len() {
            return Err(BackendError::LengthMismatch { op, expected: a.len(), got: b.len() });
        }
        let b = self.vec(b)?;
        let a = self.vec_mut(a)?;
        Ok((a, b))
    }

    fn scalars<'a>(&self, op: &'static str, scalars: &Scalars<'a>) -> BackendResult<&'a [Fr]> {
        match scalars {
            Scalars::Host(s) => Ok(s),
            Scalars::Device(buf, range) => {
                check_range(op, range, buf.len())?;
                Ok(&self.vec(buf)?[range.clone()])
            }
        }
    }
}

fn msm_bases<'a, T>(op: &'static str, bases: &'a [T], n: usize) -> BackendResult<&'a [T]> {
    bases.get(..n).ok_or(BackendError::LengthMismatch { op, expected: n, got: bases.len() })
}

impl Backend for CpuBackend {
    fn id(&self) -> BackendId {
        self.id
    }

    fn info(&self) -> BackendInfo {
        BackendInfo {
            kind: BackendKind::Cpu,
            device: self.device.clone(),
            driver: "arkworks 0.6".to_string(),
            memory_bytes: host_memory_bytes(),
            max_ntt_log2: MAX_NTT_LOG2,
            capabilities: vec![format!("rayon x{}", rayon::current_num_threads())],
        }
    }

    fn upload_scalars(&self, host: &[Fr]) -> BackendResult<ScalarBuffer> {
        Ok(self.wrap(self.timed("upload_scalars", || host.to_vec())))
    }

    fn alloc_scalars(&self, len: usize) -> BackendResult<ScalarBuffer> {
        Ok(self.wrap(vec![Fr::from(0u64); len]))
    }

    fn download_scalars(&self, buf: &ScalarBuffer) -> BackendResult<Vec<Fr>> {
        let v = self.vec(buf)?;
        Ok(self.timed("download_scalars", || v.clone()))
    }

    fn upload_g1_bases(&self, host: &[G1Affine]) -> BackendResult<G1Bases> {
        Ok(self.wrap(self.timed("upload_g1_bases", || host.to_vec())))
    }

    fn upload_g2_bases(&self, host: &[G2Affine]) -> BackendResult<G2Bases> {
        Ok(self.wrap(self.timed("upload_g2_bases", || host.to_vec())))
    }

    fn ntt(&self, buf: &mut ScalarBuffer, kind: NttKind) -> BackendResult<()> {
        check_ntt_len(buf.len(), MAX_NTT_LOG2)?;
        let v = self.vec_mut(buf)?;
        self.timed(kind.span_name(), || ntt_in_place(v, kind))
    }

    fn mul_assign(&self, a: &mut ScalarBuffer, b: &ScalarBuffer) -> BackendResult<()> {
        let (a, b) = self.pair("mul_assign", a, b)?;
        self.timed("mul_assign", || a.par_iter_mut().zip(b.par_iter()).for_each(|(x, y)| *x *= y));
        Ok(())
    }

    fn sub_assign(&self, a: &mut ScalarBuffer, b: &ScalarBuffer) -> BackendResult<()> {
        let (a, b) = self.pair("sub_assign", a, b)?;
        self.timed("sub_assign", || a.par_iter_mut().zip(b.par_iter()).for_each(|(x, y)| *x -= y));
        Ok(())
    }

    fn scale(&self, a: &mut ScalarBuffer, c: Fr) -> BackendResult<()> {
        let a = self.vec_mut(a)?;
        self.timed("scale", || a.par_iter_mut().for_each(|x| *x *= c));
        Ok(())
    }

    fn quotient(&self, a: &mut ScalarBuffer, b: &ScalarBuffer, c: &ScalarBuffer, z_inv: Fr) -> BackendResult<()> {
        if a.len() != c.len() {
            return Err(BackendError::LengthMismatch { op: "quotient", expected: a.len(), got: c.len() });
        }
        let c = self.vec(c)?;
        let (a, b) = self.pair("quotient", a, b)?;
        // One pass instead of three: the same arithmetic, a third of the memory traffic.
        self.timed("quotient", || {
            a.par_iter_mut().zip(b.par_iter()).zip(c.par_iter()).for_each(|((x, y), z)| {
                *x *= y;
                *x -= z;
                *x *= z_inv;
            })
        });
        Ok(())
    }

    fn msm_g1(&self, bases: &G1Bases, scalars: Scalars<'_>) -> BackendResult<G1Projective> {
        let s = self.scalars("msm_g1", &scalars)?;
        let b = msm_bases("msm_g1", self.vec(bases)?, s.len())?;
        Ok(self.timed("msm_g1", || G1Projective::msm_unchecked(b, s)))
    }

    fn msm_g2(&self, bases: &G2Bases, scalars: Scalars<'_>) -> BackendResult<G2Projective> {
        let s = self.scalars("msm_g2", &scalars)?;
        let b = msm_bases("msm_g2", self.vec(bases)?, s.len())?;
        Ok(self.timed("msm_g2", || G2Projective::msm_unchecked(b, s)))
    }

    fn fixed_base_g1(&self, base: G1Projective, batches: &[&[Fr]]) -> BackendResult<Vec<Vec<G1Affine>>> {
        Ok(self.timed("fixed_base_g1", || batch_mul(base, batches)))
    }

    fn fixed_base_g2(&self, base: G2Projective, batches: &[&[Fr]]) -> BackendResult<Vec<Vec<G2Affine>>> {
        Ok(self.timed("fixed_base_g2", || batch_mul(base, batches)))
    }

    fn upload_matrix(&self, m: &SparseMatrix) -> BackendResult<MatrixBuffer> {
        let stored = self.timed("upload_matrix", || m.clone());
        Ok(self.id.wrap(m.rows(), stored))
    }

    fn spmv(&self, m: &MatrixBuffer, z: &ScalarBuffer, out: &mut ScalarBuffer) -> BackendResult<()> {
        let m = m.storage::<SparseMatrix>(self.id)?;
        check_spmv(m.columns(), m.rows(), z.len(), out.len())?;
        let z = self.vec(z)?;
        let out = self.vec_mut(out)?;
        self.timed("spmv", || m.mul_vector_into(z, out));
        Ok(())
    }

    fn first_unsatisfied(&self, [a, b, c]: [&ScalarBuffer; 3], rows: usize) -> BackendResult<Option<usize>> {
        for x in [a, b, c] {
            check_range("first_unsatisfied", &(0..rows), x.len())?;
        }
        let (a, b, c) = (self.vec(a)?, self.vec(b)?, self.vec(c)?);
        Ok(self.timed("r1cs_check", || (0..rows).into_par_iter().find_first(|&i| a[i] * b[i] != c[i])))
    }

    fn drain_device_spans(&self) -> Vec<DeviceSpan> {
        std::mem::take(&mut *self.spans.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

/// arkworks' fixed-base multiplication: one table for the batches' total count (the window
/// arkworks chooses for it), each batch multiplied in parallel and normalized in one batch —
/// what its Groth16 setup does with each group's generator.
fn batch_mul<P: ark_ec::scalar_mul::ScalarMul<ScalarField = Fr>>(base: P, batches: &[&[Fr]]) -> Vec<Vec<P::MulBase>> {
    let total = super::fixed_base::total_len(batches);
    if total == 0 {
        return batches.iter().map(|_| Vec::new()).collect();
    }
    let table = BatchMulPreprocessing::new(base, total);
    batches.iter().map(|b| table.batch_mul(b)).collect()
}

fn cpu_model() -> Option<String> {
    let info = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    info.lines().find(|l| l.starts_with("model name")).and_then(|l| l.split(':').nth(1)).map(|s| s.trim().to_string())
}

fn host_memory_bytes() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let kb: u64 = info.lines().find(|l| l.starts_with("MemTotal:"))?.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ark_ff::{FftField, Field, PrimeField, UniformRand};
    use ark_poly::{EvaluationDomain, Radix2EvaluationDomain};
    use ark_std::Zero;
    use rand::SeedableRng;
    use rand_chacha::ChaCha20Rng;

    fn rng() -> ChaCha20Rng {
        ChaCha20Rng::from_entropy()
    }

    fn random_scalars(n: usize, rng: &mut ChaCha20Rng) -> Vec<Fr> {
        (0..n).map(|_| Fr::rand(rng)).collect()
    }

    #[test]
    fn ntt_kinds_match_arkworks_and_invert_each_other() {
        let mut rng = rng();
        let cpu = CpuBackend::new();
        for log in [1u32, 2, 5, 10, 12] {
            let n = 1usize << log;
            let input = random_scalars(n, &mut rng);
            let domain = Radix2EvaluationDomain::<Fr>::new(n).unwrap();
            let coset = domain.get_coset(Fr::GENERATOR).unwrap();
            for kind in NttKind::ALL {
                let mut buf = cpu.upload_scalars(&input).unwrap();
                cpu.ntt(&mut buf, kind).unwrap();
                let got = cpu.download_scalars(&buf).unwrap();
                let odd = domain.get_coset(Fr::get_root_of_unity(2 * n as u64).unwrap()).unwrap();
                let want = match kind {
                    NttKind::Forward => domain.fft(&input),
                    NttKind::Inverse => domain.ifft(&input),
                    NttKind::CosetForward => coset.fft(&input),
                    NttKind::CosetInverse => coset.ifft(&input),
                    NttKind::OddCosetForward => odd.fft(&input),
                };
                assert_eq!(got, want, "{kind:?} 2^{log}");
            }
            // Forward then inverse is the identity, on H and on the coset.
            for (fwd, inv) in [(NttKind::Forward, NttKind::Inverse), (NttKind::CosetForward, NttKind::CosetInverse)] {
                let mut buf = cpu.upload_scalars(&input).unwrap();
                cpu.ntt(&mut buf, fwd).unwrap();
                cpu.ntt(&mut buf, inv).unwrap();
                assert_eq!(cpu.download_scalars(&buf).unwrap(), input);
            }
        }
    }

    #[test]
    fn ntt_evaluates_the_polynomial_on_the_coset() {
        // Independent of arkworks' FFT: evaluate the polynomial directly at g·ωⁱ.
        let mut rng = rng();
        let cpu = CpuBackend::new();
        let n = 8;
        let coeffs = random_scalars(n, &mut rng);
        let mut buf = cpu.upload_scalars(&coeffs).unwrap();
        cpu.ntt(&mut buf, NttKind::CosetForward).unwrap();
        let got = cpu.download_scalars(&buf).unwrap();
        let omega = Fr::get_root_of_unity(n as u64).unwrap();
        for (i, value) in got.iter().enumerate() {
            let x = Fr::GENERATOR * omega.pow([i as u64]);
            let want = coeffs.iter().rev().fold(Fr::zero(), |acc, c| acc * x + c);
            assert_eq!(*value, want, "point {i}");
        }
    }

    #[test]
    fn ntt_rejects_bad_lengths() {
        let cpu = CpuBackend::new();
        for n in [0usize, 1, 3, 6, 100] {
            let mut buf = cpu.upload_scalars(&vec![Fr::from(1u64); n]).unwrap();
            assert!(matches!(cpu.ntt(&mut buf, NttKind::Forward), Err(BackendError::NttSize { .. })), "n = {n}");
        }
    }

    #[test]
    fn pointwise_ops_and_quotient() {
        let mut rng = rng();
        let cpu = CpuBackend::new();
        let n = 64;
        let (a, b, c) = (random_scalars(n, &mut rng), random_scalars(n, &mut rng), random_scalars(n, &mut rng));
        let k = Fr::rand(&mut rng);
        let want: Vec<Fr> = (0..n).map(|i| (a[i] * b[i] - c[i]) * k).collect();

        let (mut da, db, dc) =
            (cpu.upload_scalars(&a).unwrap(), cpu.upload_scalars(&b).unwrap(), cpu.upload_scalars(&c).unwrap());
        cpu.quotient(&mut da, &db, &dc, k).unwrap();
        assert_eq!(cpu.download_scalars(&da).unwrap(), want);

        let mut da = cpu.upload_scalars(&a).unwrap();
        cpu.mul_assign(&mut da, &db).unwrap();
        cpu.sub_assign(&mut da, &dc).unwrap();
        cpu.scale(&mut da, k).unwrap();
        assert_eq!(cpu.download_scalars(&da).unwrap(), want);

        let short = cpu.upload_scalars(&a[..n - 1]).unwrap();
        assert!(matches!(cpu.mul_assign(&mut da, &short), Err(BackendError::LengthMismatch { .. })));
    }

    /// Double-and-add, independent of any MSM algorithm.
    fn naive_msm<P: ark_ec::CurveGroup>(bases: &[P::Affine], scalars: &[P::ScalarField]) -> P {
        bases.iter().zip(scalars).map(|(b, s)| *b * s).sum()
    }

    #[test]
    fn msm_matches_naive_on_random_and_edge_cases() {
        use ark_ec::AffineRepr;
        let mut rng = rng();
        let cpu = CpuBackend::new();
        let minus_one = -Fr::from(1u64); // r − 1, the largest scalar
        for n in [1usize, 2, 3, 100, 257] {
            let mut bases: Vec<G1Affine> =
                (0..n).map(|_| (G1Affine::generator() * Fr::rand(&mut rng)).into()).collect();
            let mut g2: Vec<G2Affine> = (0..n).map(|_| (G2Affine::generator() * Fr::rand(&mut rng)).into()).collect();
            let mut scalars = random_scalars(n, &mut rng);
            // Edge cases woven in: zero and one scalars, r − 1, the identity and a repeated point.
            scalars[0] = Fr::zero();
            if n > 1 {
                scalars[1] = Fr::from(1u64);
                bases[1] = G1Affine::zero();
                g2[1] = G2Affine::zero();
            }
            if n > 2 {
                scalars[2] = minus_one;
                bases[2] = bases[0];
                g2[2] = g2[0];
            }
            let db = cpu.upload_g1_bases(&bases).unwrap();
            let dg2 = cpu.upload_g2_bases(&g2).unwrap();
            let ds = cpu.upload_scalars(&scalars).unwrap();
            let want1: G1Projective = naive_msm(&bases, &scalars);
            let want2: G2Projective = naive_msm(&g2, &scalars);
            assert_eq!(cpu.msm_g1(&db, Scalars::Host(&scalars)).unwrap(), want1, "g1 host n={n}");
            assert_eq!(cpu.msm_g1(&db, Scalars::Device(&ds, 0..n)).unwrap(), want1, "g1 device n={n}");
            assert_eq!(cpu.msm_g2(&dg2, Scalars::Device(&ds, 0..n)).unwrap(), want2, "g2 n={n}");
            // A sub-range of device scalars against the first bases.
            let want_tail: G1Projective = naive_msm(&bases[..n / 2], &scalars[n - n / 2..]);
            assert_eq!(cpu.msm_g1(&db, Scalars::Device(&ds, n - n / 2..n)).unwrap(), want_tail);
        }
        // All-zero and all-equal scalars.
        let bases: Vec<G1Affine> = (0..50).map(|_| (G1Affine::generator() * Fr::rand(&mut rng)).into()).collect();
        let db = cpu.upload_g1_bases(&bases).unwrap();
        assert!(cpu.msm_g1(&db, Scalars::Host(&[Fr::zero(); 50])).unwrap().is_zero());
        let k = Fr::rand(&mut rng);
        let sum: G1Projective = bases.iter().map(|b| b.into_group()).sum();
        assert_eq!(cpu.msm_g1(&db, Scalars::Host(&[k; 50])).unwrap(), sum * k);
        // Empty MSM is the identity.
        assert!(cpu.msm_g1(&db, Scalars::Host(&[])).unwrap().is_zero());
        let _ = Fr::MODULUS_BIT_SIZE;
    }

    #[test]
    fn msm_rejects_short_bases_and_bad_ranges() {
        let cpu = CpuBackend::new();
        let bases = cpu.upload_g1_bases(&[G1Affine::default(); 3]).unwrap();
        let s = cpu.upload_scalars(&[Fr::from(2u64); 5]).unwrap();
        assert!(matches!(cpu.msm_g1(&bases, Scalars::Device(&s, 0..5)), Err(BackendError::LengthMismatch { .. })));
        assert!(matches!(cpu.msm_g1(&bases, Scalars::Device(&s, 2..7)), Err(BackendError::OutOfRange { .. })));
    }

    #[test]
    fn device_spans_nest_under_the_current_span() {
        let tl = crate::timeline::Timeline::new();
        let cpu = CpuBackend::new();
        let guard = tl.span(crate::timeline::Layer::Prover, "outer");
        let mut buf = cpu.upload_scalars(&[Fr::from(5u64); 16]).unwrap();
        cpu.ntt(&mut buf, NttKind::Forward).unwrap();
        let id = guard.id();
        drop(guard);
        let spans = cpu.drain_device_spans();
        assert_eq!(spans.len(), 2);
        assert!(spans.iter().all(|s| s.parent == Some(id) && s.end_ns >= s.start_ns));
        assert_eq!(spans[1].name, "ntt");
        assert!(cpu.drain_device_spans().is_empty(), "drain empties");
    }
}
