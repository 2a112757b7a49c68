//! The other side of `manifest_from_zip`: a real zip (deflated) of files,
//! as gh-aw uploads its `safe-outputs-items` artifact. The model of GitHub
//! serves artifacts made with it, and the tests read them back.

use std::io::Write;

/// A real zip (deflated) of the given files (name, contents).
pub fn zip_of(files: &[(&str, &str)]) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for (name, body) in files {
        w.start_file(*name, options).expect("a zip in memory");
        w.write_all(body.as_bytes()).expect("a zip in memory");
    }
    w.finish().expect("a zip in memory").into_inner()
}
