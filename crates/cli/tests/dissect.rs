//! `nameway dissect` run as a program on the packets of docs/nfd-interop.md and on bad input.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

/// docs/nfd-interop.md §3.5: python-ndn consumer Interest for /example/x.
const CONSUMER_INTEREST: &str =
    "051a 070c 0807 6578616d706c65 0801 78 1200 0a04 7e7cf9ce 0c02 0fa0";

/// docs/nfd-interop.md §4.1: python appv2 rib/register of /example, v0.3 signed Interest.
const REGISTER_APPV2: &str = "\
0599075008096c6f63616c686f737408036e6664080372696208087265676973746572080d680b070908076578616d706c65
02205388a7740003e4e3f8f064137f530cc278fdc25a63f754706b09b761feda420e0a04c892b7b40c0203e8
24002c171b01002608e5f8c7c792645cd82808000001a1ff7ade8c2e20af32d7091b4ae52a2b55c35fa668fb83fbd8d85e9ae4879b002ca4b896dcc8c8";

/// docs/nfd-interop.md §4.1: python legacy rib/register, v0.2 command Interest.
const REGISTER_LEGACY: &str = "\
0579076d08096c6f63616c686f737408036e6664080372696208087265676973746572080d680b070908076578616d706c65
0808000001a1ff7b0d3d080874dbb8bcddd2397e080516031b0100082217207585aa52b2300f1bdf0a8e4a6ac2048cd19c45
2ed3af9f3894a824c2a7247e7e0a0433abfeb50c0203e8";

/// docs/nfd-interop.md §4.1: NDNts LpPacket{PitToken, Fragment{v0.3 register Interest}}.
const REGISTER_NDNTS_LP: &str = "\
64b462064167ffffffff50aa05a8075f08096c6f63616c686f737408036e6664080372696208087265676973746572081c68
1a070908076578616d706c656f01416a01006c01026d0400124f8002202cae6bf5f381a9876b6dadc4d461a4a9d22e247c8bef
30c8f2f265d699edd8fd0a0455e5f61d0c020f9f24002c171b010026080d0ecf283cdad6972808000001a1ff7cfc5a2e20f340
a4d95d2db4ab94724aae9d87871806bfe45e00f064e2ab53605eb3010558";

/// The rib/register response of docs/nfd-interop.md §5.3 for REGISTER_APPV2 (face 256), with
/// FreshnessPeriod 1000 and a correct DigestSha256.
const REGISTER_RESPONSE: &str = "\
06a7075008096c6f63616c686f737408036e6664080372696208087265676973746572080d680b070908076578616d706c65
02205388a7740003e4e3f8f064137f530cc278fdc25a63f754706b09b761feda420e1407180100190203e8152365216601c8
67024f4b6818070908076578616d706c65690201006f01006a01006c010116031b01001720f0416879629669b1fb55ab83b4
10182a1c8d8d7ea7f984adf1f763f9d2db2f52";

/// Data /example/x, FreshnessPeriod 10000, Content "Hello, world!", DigestSha256.
const TEXT_DATA: &str = "\
064a070c08076578616d706c65080178140419022710150d48656c6c6f2c20776f726c642116031b01001720e9c8212a16a9
31ae4a6869631dec01c51fe70de0088e7154e2cb8e1732e44c3f";

/// Nack NoRoute for CONSUMER_INTEREST, as NFD sends it (docs/nfd-interop.md §6).
const NACK: &str =
    "6427fd032005fd03210196501c051a070c08076578616d706c6508017812000a047e7cf9ce0c020fa0";

fn nameway(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_nameway"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn nameway");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin)
        .expect("write stdin");
    child.wait_with_output().expect("wait for nameway")
}

/// Dissects a hex packet; asserts success and returns stdout.
fn tree(hex: &str) -> String {
    let out = nameway(&["dissect", "--hex"], hex.as_bytes());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "exit {:?}, stderr: {stderr}",
        out.status
    );
    assert!(stderr.is_empty(), "{stderr}");
    String::from_utf8(out.stdout).expect("utf-8 output")
}

fn json(hex: &str) -> Value {
    let out = nameway(&["dissect", "--hex", "--json"], hex.as_bytes());
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("valid JSON")
}

/// Runs with the given input, asserts failure, returns (stdout, stderr).
fn failure(args: &[&str], input: &[u8]) -> (String, String) {
    let out = nameway(args, input);
    assert_eq!(
        out.status.code(),
        Some(1),
        "stdout: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    let stderr = String::from_utf8(out.stderr).expect("utf-8 stderr");
    assert!(!stderr.contains("panicked"), "{stderr}");
    (String::from_utf8(out.stdout).expect("utf-8 stdout"), stderr)
}

fn unhex(s: &str) -> Vec<u8> {
    let digits: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    hex::decode(digits).expect("test vector is hex")
}

#[test]
fn consumer_interest_tree() {
    assert_eq!(
        tree(CONSUMER_INTEREST),
        "\
5 (Interest) [26]
  7 (Name) [12] /example/x
    8 (GenericNameComponent) [7] example
    8 (GenericNameComponent) [1] x
  18 (MustBeFresh) [0]
  10 (Nonce) [4] 7e7cf9ce
  12 (InterestLifetime) [2] 4000
"
    );
}

#[test]
fn raw_bytes_from_file_and_stdin() {
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("consumer-interest.bin");
    std::fs::write(&path, unhex(CONSUMER_INTEREST)).unwrap();
    let from_file = nameway(&["dissect", path.to_str().unwrap()], b"");
    assert!(from_file.status.success());
    let from_stdin = nameway(&["dissect"], &unhex(CONSUMER_INTEREST));
    assert!(from_stdin.status.success());
    assert_eq!(from_file.stdout, from_stdin.stdout);
    assert_eq!(
        String::from_utf8(from_file.stdout).unwrap(),
        tree(CONSUMER_INTEREST)
    );
}

#[test]
fn register_appv2_shows_parameters_and_signature() {
    let t = tree(REGISTER_APPV2);
    for line in [
        "5 (Interest) [153]",
        "  7 (Name) [80] /localhost/nfd/rib/register/h%0B%07%09%08%07example/params-sha256=\
         5388a7740003e4e3f8f064137f530cc278fdc25a63f754706b09b761feda420e",
        "    8 (GenericNameComponent) [13] h%0B%07%09%08%07example",
        "      104 (ControlParameters) [11]",
        "        7 (Name) [9] /example",
        "    2 (ParametersSha256DigestComponent) [32] params-sha256=\
         5388a7740003e4e3f8f064137f530cc278fdc25a63f754706b09b761feda420e",
        "  10 (Nonce) [4] c892b7b4",
        "  12 (InterestLifetime) [2] 1000",
        "  36 (ApplicationParameters) [0]",
        "  44 (InterestSignatureInfo) [23]",
        "    27 (SignatureType) [1] 0 (DigestSha256)",
        "    38 (SignatureNonce) [8] e5f8c7c792645cd8",
        "    40 (SignatureTime) [8] 1795287604876",
        "  46 (InterestSignatureValue) [32] \
         af32d7091b4ae52a2b55c35fa668fb83fbd8d85e9ae4879b002ca4b896dcc8c8",
    ] {
        assert!(t.lines().any(|l| l == line), "missing {line:?} in\n{t}");
    }
}

#[test]
fn register_legacy_shows_name_signature_components() {
    let t = tree(REGISTER_LEGACY);
    for line in [
        "5 (Interest) [121]",
        "    8 (GenericNameComponent) [8] %00%00%01%A1%FF%7B%0D%3D",
        "    8 (GenericNameComponent) [5] %16%03%1B%01%00",
        "      22 (SignatureInfo) [3]",
        "        27 (SignatureType) [1] 0 (DigestSha256)",
        "      23 (SignatureValue) [32] \
         7585aa52b2300f1bdf0a8e4a6ac2048cd19c452ed3af9f3894a824c2a7247e7e",
        "  10 (Nonce) [4] 33abfeb5",
        "  12 (InterestLifetime) [2] 1000",
    ] {
        assert!(t.lines().any(|l| l == line), "missing {line:?} in\n{t}");
    }
}

#[test]
fn ndnts_lp_packet_dissects_the_fragment() {
    let t = tree(REGISTER_NDNTS_LP);
    for line in [
        "100 (LpPacket) [180]",
        "  98 (PitToken) [6] 4167ffffffff",
        "  80 (Fragment) [170]",
        "    5 (Interest) [168]",
        "          104 (ControlParameters) [26]",
        "            111 (Origin) [1] 65 (client)",
        "            106 (Cost) [1] 0",
        "            108 (Flags) [1] 2",
        "            109 (ExpirationPeriod) [4] 1200000",
        "      12 (InterestLifetime) [2] 3999",
    ] {
        assert!(t.lines().any(|l| l == line), "missing {line:?} in\n{t}");
    }
}

#[test]
fn nack_shows_reason_and_interest() {
    let t = tree(NACK);
    assert!(t.starts_with(
        "\
100 (LpPacket) [39]
  800 (Nack) [5]
    801 (NackReason) [1] 150 (NoRoute)
  80 (Fragment) [28]
    5 (Interest) [26]
      7 (Name) [12] /example/x
"
    ));
}

#[test]
fn data_with_text_content() {
    assert_eq!(
        tree(TEXT_DATA),
        "\
6 (Data) [74]
  7 (Name) [12] /example/x
    8 (GenericNameComponent) [7] example
    8 (GenericNameComponent) [1] x
  20 (MetaInfo) [4]
    25 (FreshnessPeriod) [2] 10000
  21 (Content) [13] \"Hello, world!\"
  22 (SignatureInfo) [3]
    27 (SignatureType) [1] 0 (DigestSha256)
  23 (SignatureValue) [32] e9c8212a16a931ae4a6869631dec01c51fe70de0088e7154e2cb8e1732e44c3f
"
    );
}

#[test]
fn management_response_content_is_dissected() {
    let t = tree(REGISTER_RESPONSE);
    let body: Vec<&str> = t
        .lines()
        .skip_while(|l| !l.contains("(Content)"))
        .take(11)
        .collect();
    assert_eq!(
        body,
        [
            "  21 (Content) [35]",
            "    101 (ControlResponse) [33]",
            "      102 (StatusCode) [1] 200",
            "      103 (StatusText) [2] \"OK\"",
            "      104 (ControlParameters) [24]",
            "        7 (Name) [9] /example",
            "          8 (GenericNameComponent) [7] example",
            "        105 (FaceId) [2] 256",
            "        111 (Origin) [1] 0 (app)",
            "        106 (Cost) [1] 0",
            "        108 (Flags) [1] 1",
        ]
    );
    assert!(t.contains("    24 (ContentType) [1] 0 (BLOB)\n    25 (FreshnessPeriod) [2] 1000\n"));
}

#[test]
fn long_content_is_cut_with_its_size() {
    // Data /example/file/v=1700000000000/seg=0, FinalBlockId seg=0, 1 KiB of content.
    let name = "071c08076578616d706c65080466696c6536080000018bcfe56800320100";
    let meta = "1409190227101a03320100";
    let content: String = (0..4)
        .map(|_| (0..=255u8).map(|b| format!("{b:02x}")).collect::<String>())
        .collect();
    let sig = "16031b01001720".to_owned() + &"00".repeat(32);
    let data = format!("06fd0454{name}{meta}15fd0400{content}{sig}");
    let t = tree(&data);
    assert!(
        t.contains("  7 (Name) [28] /example/file/v=1700000000000/seg=0\n"),
        "{t}"
    );
    assert!(t.contains("    54 (VersionNameComponent) [8] v=1700000000000\n"));
    assert!(t.contains("    26 (FinalBlockId) [3]\n      50 (SegmentNameComponent) [1] seg=0\n"));
    let cut = format!("  21 (Content) [1024] {}... (1024 bytes)\n", &content[..64]);
    assert!(t.contains(&cut), "{t}");
}

#[test]
fn json_tree_of_consumer_interest() {
    let v = json(CONSUMER_INTEREST);
    let top = &v[0];
    assert_eq!(v.as_array().map(Vec::len), Some(1));
    assert_eq!(top["type"], 5);
    assert_eq!(top["name"], "Interest");
    assert_eq!(top["length"], 26);
    assert_eq!(top["offset"], 0);
    assert!(top.get("value").is_none());
    let kids = top["children"].as_array().unwrap();
    let summary: Vec<(u64, &str, u64, Option<&str>)> = kids
        .iter()
        .map(|k| {
            (
                k["type"].as_u64().unwrap(),
                k["name"].as_str().unwrap(),
                k["offset"].as_u64().unwrap(),
                k.get("value").and_then(Value::as_str),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            (7, "Name", 2, Some("/example/x")),
            (18, "MustBeFresh", 16, None),
            (10, "Nonce", 18, Some("7e7cf9ce")),
            (12, "InterestLifetime", 24, Some("4000")),
        ]
    );
    let comps = kids[0]["children"].as_array().unwrap();
    assert_eq!(comps[1]["value"], "x");
    assert_eq!(comps[1]["offset"], 13);
    assert_eq!(comps[1]["length"], 1);
    assert!(kids[1].get("children").is_none());
}

#[test]
fn json_tree_of_lp_packet_keeps_absolute_offsets() {
    let v = json(REGISTER_NDNTS_LP);
    let fragment = &v[0]["children"][1];
    assert_eq!(fragment["name"], "Fragment");
    let interest = &fragment["children"][0];
    assert_eq!(
        (interest["type"].as_u64(), interest["offset"].as_u64()),
        (Some(5), Some(12))
    );
    let params = &interest["children"][0]["children"][4]["children"][0];
    assert_eq!(params["name"], "ControlParameters");
    let origin = &params["children"][1];
    assert_eq!(
        (origin["name"].as_str(), origin["value"].as_str()),
        (Some("Origin"), Some("65 (client)"))
    );
    let bytes = unhex(REGISTER_NDNTS_LP);
    let at = origin["offset"].as_u64().unwrap() as usize;
    assert_eq!(&bytes[at..at + 3], [0x6f, 0x01, 0x41]);
}

#[test]
fn truncated_packet_prints_what_it_could_then_fails() {
    let (stdout, stderr) = failure(
        &["dissect", "--hex"],
        b"051a070c08076578616d706c650801781200",
    );
    assert_eq!(
        stdout,
        "\
5 (Interest) [26, truncated: 16 bytes present]
  7 (Name) [12] /example/x
    8 (GenericNameComponent) [7] example
    8 (GenericNameComponent) [1] x
  18 (MustBeFresh) [0]
"
    );
    assert_eq!(
        stderr,
        "nameway: error: malformed packet: TLV-LENGTH exceeds the enclosing element at offset 0 \
         in Interest (0x5)\n"
    );
}

#[test]
fn truncated_json_is_still_valid_json() {
    let (stdout, stderr) = failure(
        &["dissect", "--hex", "--json"],
        b"051a070c08076578616d706c65080178120",
    );
    assert!(stderr.contains("odd number of hex digits"), "{stderr}");
    assert!(stdout.is_empty());
    let (stdout, _) = failure(
        &["dissect", "--hex", "--json"],
        b"051a070c08076578616d706c6508",
    );
    let v: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v[0]["truncated"], 12);
    assert_eq!(v[0]["children"][0]["truncated"], 10);
}

#[test]
fn non_minimal_var_number_is_rejected() {
    // TLV-LENGTH 0x1a written in three bytes.
    let (_, stderr) = failure(
        &["dissect", "--hex"],
        b"05fd001a070c08076578616d706c650801781200",
    );
    assert_eq!(
        stderr,
        "nameway: error: malformed packet: VAR-NUMBER not in shortest form at offset 1 in \
         Interest (0x5)\n"
    );
}

#[test]
fn trailing_bytes_are_rejected() {
    let input = format!("{CONSUMER_INTEREST} 0500");
    let (stdout, stderr) = failure(&["dissect", "--hex"], input.as_bytes());
    assert!(stdout.starts_with("5 (Interest) [26]\n"));
    assert_eq!(
        stderr,
        "nameway: error: malformed packet: trailing bytes after the element at offset 28\n"
    );
}

#[test]
fn empty_input_is_rejected() {
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("empty.bin");
    std::fs::write(&path, b"").unwrap();
    let (stdout, stderr) = failure(&["dissect", path.to_str().unwrap()], b"");
    assert!(stdout.is_empty());
    assert_eq!(
        stderr,
        "nameway: error: empty input: there is no packet to dissect\n"
    );
    let (_, stderr) = failure(&["dissect", "--hex"], b" \n\t");
    assert!(stderr.contains("empty input"), "{stderr}");
}

#[test]
fn non_hex_input_is_rejected() {
    let (stdout, stderr) = failure(&["dissect", "--hex"], b"051a 07xz");
    assert!(stdout.is_empty());
    assert_eq!(
        stderr,
        "nameway: error: --hex input: 'x' at byte 7 is not a hex digit\n"
    );
}

#[test]
fn missing_file_is_reported() {
    let (_, stderr) = failure(&["dissect", "/nonexistent/packet.bin"], b"");
    assert!(
        stderr.starts_with("nameway: error: reading /nonexistent/packet.bin: "),
        "{stderr}"
    );
}

#[test]
fn wrong_parameters_digest_is_reported_after_the_tree() {
    // The appv2 register Interest with one byte of InterestSignatureValue changed.
    let bad = REGISTER_APPV2.replace("c8c8", "c8c9");
    let (stdout, stderr) = failure(&["dissect", "--hex"], bad.as_bytes());
    assert!(stdout.starts_with("5 (Interest) [153]\n"));
    assert_eq!(
        stderr,
        "nameway: error: invalid Interest: ParametersSha256DigestComponent does not match the \
         parameters at offset 0 in Interest (0x5)\n"
    );
}

#[test]
fn invalid_inner_packet_is_located_in_the_lp_packet() {
    // Nack whose Interest has MustBeFresh before CanBePrefix.
    let (_, stderr) = failure(
        &["dissect", "--hex"],
        b"6419 fd032005fd03210196 500e 050c 0703080161 1200 2100 0c0103",
    );
    assert_eq!(
        stderr,
        "nameway: error: invalid Interest: CanBePrefix (0x21) repeated or out of order at offset \
         22 in CanBePrefix (0x21)\n"
    );
}

#[test]
fn garbage_never_panics() {
    // A few hostile shapes: huge lengths, zero types, 9-byte VAR-NUMBERs, deep nesting.
    let deep: String = (0..40)
        .map(|i| format!("14{:02x}", 2 * (40 - i)))
        .collect::<String>()
        + "1400";
    for input in [
        "ffffffffffffffffff",
        "00",
        "05ffffffffffffffffff",
        "0500fe",
        "64ff",
        &deep,
    ] {
        let out = nameway(&["dissect", "--hex"], input.as_bytes());
        assert_eq!(out.status.code(), Some(1), "{input}");
        assert!(
            !String::from_utf8_lossy(&out.stderr).contains("panicked"),
            "{input}"
        );
    }
}

#[test]
fn bad_tlv_inside_an_opaque_component_is_not_fatal() {
    // /localhost/nfd/rib/register/<68 03 07 05 08>: a ControlParameters whose Name runs past
    // its end. The component is opaque to the packet format, so the packet is fine.
    let t = tree(
        "052e 0726 0809 6c6f63616c686f7374 0803 6e6664 0803 726962 0808 7265676973746572 \
         0805 6803070508 0a04 01020304",
    );
    assert!(
        t.contains("    8 (GenericNameComponent) [5] h%03%07%05%08\n  10 (Nonce) [4] 01020304\n"),
        "{t}"
    );
}
