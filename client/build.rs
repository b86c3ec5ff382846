// The API's messages and both sides' stubs, from proto/g16.proto (protoc: Debian's
// protobuf-compiler, or PROTOC naming one).
fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=proto/g16.proto");
    // Chunks as `Bytes`: the client slices one buffer instead of copying each chunk, and the
    // server takes each chunk out of the received frame without a copy.
    tonic_prost_build::configure()
        .bytes(".g16.v1.ProveChunk.data")
        .bytes(".g16.v1.RegisterChunk.data")
        .compile_protos(&["proto/g16.proto"], &["proto"])?;
    Ok(())
}
