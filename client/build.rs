// The API's messages and both sides' stubs, from proto/g16.proto (protoc: Debian's
// protobuf-compiler, or PROTOC naming one).
fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=proto/g16.proto");
    tonic_prost_build::configure().compile_protos(&["proto/g16.proto"], &["proto"])?;
    Ok(())
}
