use ark_bls12_381::{Fr, G2Affine, G2Projective, G1Projective, G1Affine};
use ark_ec::{CurveGroup, PrimeGroup, VariableBaseMSM};
use g16_wgpu::{Options, WgpuDevice};

fn main() {
    let dev = WgpuDevice::open(&Options::default()).unwrap();
    let g2: Vec<G2Affine> = vec![(G2Projective::generator() * Fr::from(5u64)).into_affine()];
    let g1: Vec<G1Affine> = vec![(G1Projective::generator() * Fr::from(5u64)).into_affine()];
    let b2 = dev.upload_g2(&g2).unwrap();
    let b1 = dev.upload_g1(&g1).unwrap();
    let mut rng = ark_std::test_rng();
    let pow = |e: u32| { let mut x = Fr::from(1u64); for _ in 0..e { x = x + x; } x };
    let list: Vec<Fr> = (1..=16u64).map(Fr::from).chain([pow(4)*Fr::from(7u64), pow(8) * Fr::from(6u64)]).collect();
    for k in list.into_iter().chain([Fr::from(1u64 << 63) * Fr::from(1u64 << 63), -Fr::from(1u64), <Fr as ark_ff::UniformRand>::rand(&mut rng), Fr::from(255u64), Fr::from(256u64), Fr::from(65535u64), Fr::from(u64::MAX)]) {
        let s = vec![k];
        let d = dev.upload_fr(&s).unwrap();
        let t = std::time::Instant::now();
        let got = dev.msm_g2(&b2, &d, 0..1, None).unwrap();
        let ms = t.elapsed().as_secs_f64() * 1e3;
        let got1 = dev.msm_g1(&b1, &d, 0..1, None).unwrap();
        println!("k={k}: g2 {} ({ms:.0} ms) g1 {}", got == G2Projective::msm_unchecked(&g2, &s), got1 == G1Projective::msm_unchecked(&g1, &s));
    }
}
