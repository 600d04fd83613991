use super::*;

const CHAIN: &str = r#"
[defaults]
config = "[cs]\ncapacity = 1000\n"

[[node]]
name = "c"

[[node]]
name = "r"
config = """
[cs]
capacity = 0
"""

[[node]]
name = "p"

[[node]]
name = "server"
kind = "app"
on = "p"
command = "nameway ping-server /p"
ready = "PING SERVER"

[[link]]
a = "c"
b = "r"
delay_ms = 5
loss = 0.01

[[link]]
a = "r"
b = "p"
rate_mbps = 100
secure = "link-wide"

[[route]]
prefix = "/p"
to = "p"

[[route]]
prefix = "/c"
node = "r"
via = "c"
cost = 5

[[step]]
on = "c"
run = "nameway ping /p -c 3"
"#;

fn err(text: &str) -> String {
    let e = Topology::parse(text, "t").unwrap_err().to_string();
    assert!(!e.contains('\n'), "not one line: {e}");
    e
}

#[test]
fn a_chain_parses_and_routes_resolve() {
    let t = Topology::parse(CHAIN, "chain").unwrap();
    assert_eq!(t.lab_name(), "chain");
    assert_eq!(t.nodes.len(), 4);
    assert_eq!(t.nodes[3].kind, NodeKind::App);
    assert_eq!(t.links[0].mtu, 1500);
    assert_eq!(t.links[1].secure, Some(Secure::LinkWide));
    let routes = t.resolve_routes().unwrap();
    // /p toward p: on c (out by link 0) and on r (out by link 1); /c on r by link 0.
    let got: Vec<(usize, usize, &str, u64)> = routes
        .iter()
        .map(|r| (r.node, r.link, r.prefix.as_str(), r.cost))
        .collect();
    assert_eq!(got, [(0, 0, "/p", 0), (1, 1, "/p", 0), (1, 0, "/c", 5)]);
    assert_eq!(t.steps[0].timeout_s, 60.0);
}

#[test]
fn a_name_in_the_file_wins_over_the_stem() {
    let t = Topology::parse("name = \"x1\"\n[[node]]\nname = \"a\"\n", "file").unwrap();
    assert_eq!(t.lab_name(), "x1");
}

#[test]
fn shortest_paths_in_a_grid() {
    // 3x3 grid, routes toward the far corner: every node's next hop is one step closer.
    let mut text = String::new();
    for r in 0..3 {
        for c in 0..3 {
            text += &format!("[[node]]\nname = \"n{r}{c}\"\n");
        }
    }
    for r in 0..3 {
        for c in 0..3 {
            if c < 2 {
                text += &format!("[[link]]\na = \"n{r}{c}\"\nb = \"n{r}{}\"\n", c + 1);
            }
            if r < 2 {
                text += &format!("[[link]]\na = \"n{r}{c}\"\nb = \"n{}{c}\"\n", r + 1);
            }
        }
    }
    text += "[[route]]\nprefix = \"/far\"\nto = \"n22\"\n";
    let t = Topology::parse(&text, "grid").unwrap();
    let routes = t.resolve_routes().unwrap();
    assert_eq!(routes.len(), 8);
    let dist = |i: usize| {
        let n = &t.nodes[i].name;
        let (r, c) = (n.as_bytes()[1] - b'0', n.as_bytes()[2] - b'0');
        usize::from(2 - r) + usize::from(2 - c)
    };
    for r in routes {
        let l = &t.links[r.link];
        let other = if l.a == t.nodes[r.node].name {
            &l.b
        } else {
            &l.a
        };
        let o = t.node_index(other).unwrap();
        assert_eq!(
            dist(o) + 1,
            dist(r.node),
            "{} -> {other}",
            t.nodes[r.node].name
        );
    }
}

#[test]
fn bad_files_get_one_line_naming_the_culprit() {
    let node = |n: &str| format!("[[node]]\nname = \"{n}\"\n");
    let two = node("a") + &node("b");
    let cases: Vec<(String, &str)> = vec![
        (String::new(), "no [[node]]"),
        (node("a") + &node("a"), "node \"a\": the name is used twice"),
        (node("a b"), "node \"a b\": a name is 1 to 24"),
        (two.clone() + "[[link]]\na = \"a\"\nb = \"x\"\n", "link a-x: unknown node \"x\""),
        (two.clone() + "[[link]]\na = \"a\"\nb = \"a\"\n", "link a-a: a link from a node to itself"),
        (
            two.clone() + "[[link]]\na = \"a\"\nb = \"b\"\n[[link]]\na = \"b\"\nb = \"a\"\n",
            "link b-a: a second link between the same nodes",
        ),
        (two.clone() + "[[link]]\na = \"a\"\nb = \"b\"\nrate_mbps = 0\n", "link a-b: rate_mbps must be above 0"),
        (two.clone() + "[[link]]\na = \"a\"\nb = \"b\"\nloss = 1.5\n", "link a-b: loss must be between 0 and 1"),
        (two.clone() + "[[link]]\na = \"a\"\nb = \"b\"\nmtu = 100\n", "link a-b: mtu must be between"),
        (two.clone() + "[[link]]\na = \"a\"\nb = \"b\"\nqueue_kib = 10\n", "link a-b: queue_kib needs rate_mbps"),
        (two.clone() + "[[link]]\na = \"a\"\nb = \"b\"\nrate = 5\n", "link a-b (line 8): unknown field `rate`"),
        (node("a") + "colour = \"red\"\n", "node a (line 3): unknown field `colour`"),
        (node("a") + "kind = \"router\"\n", "node a (line 3): unknown variant `router`"),
        ("[[node]\nname = \"a\"\n".into(), "line 1:"),
        (
            "[[node]]\nname = \"a\"\nkind = \"nfd\"\n[[node]]\nname = \"b\"\nkind = \"nfd\"\n[[link]]\na = \"a\"\nb = \"b\"\ndelay_ms = 5\n".into(),
            "link a-b: delay, jitter and loss are emulated by namewayd's faces, and both ends run NFD",
        ),
        (
            node("a") + "[[node]]\nname = \"b\"\nkind = \"nfd\"\n[[link]]\na = \"a\"\nb = \"b\"\nsecure = \"link-wide\"\n",
            "link a-b: b runs NFD, which has no secure faces",
        ),
        (node("a") + "[[node]]\nname = \"p\"\nkind = \"app\"\ncommand = \"true\"\n", "node p: an app needs `on`"),
        (node("a") + "[[node]]\nname = \"p\"\nkind = \"app\"\non = \"zz\"\ncommand = \"true\"\n", "node p: unknown node \"zz\""),
        (node("a") + "[[node]]\nname = \"p\"\nkind = \"app\"\non = \"a\"\n", "node p: an app needs a `command`"),
        (
            node("a") + "[[node]]\nname = \"p\"\nkind = \"app\"\non = \"a\"\ncommand = \"x\"\n[[link]]\na = \"a\"\nb = \"p\"\n",
            "link a-p: p is an app",
        ),
        (node("a") + "command = \"x\"\n", "node a: `on`, `command` and `ready` are for app nodes"),
        (two.clone() + "[[route]]\nprefix = \"/x\"\nnode = \"a\"\nvia = \"b\"\n", "route /x: b is not a neighbour of a"),
        (two.clone() + "[[route]]\nprefix = \"/x\"\nto = \"b\"\n", "route /x: b cannot be reached from a"),
        (two.clone() + "[[route]]\nprefix = \"/x\"\nto = \"q\"\n", "route /x: unknown node \"q\""),
        (two.clone() + "[[route]]\nprefix = \"/x\"\nvia = \"b\"\n", "route /x: `via` needs `node`"),
        (two.clone() + "[[route]]\nprefix = \"x\"\nto = \"b\"\n", "route x: not an NDN name"),
        (two.clone() + "[[step]]\non = \"c\"\nrun = \"true\"\n", "step 1 on c: unknown node \"c\""),
        (two.clone() + "[[step]]\non = \"a\"\nrun = \"true\"\ntimeout_s = 0\n", "step 1 on a: timeout_s must be above 0"),
        ("name = \"Big Lab\"\n".to_owned() + &node("a"), "lab \"Big Lab\": a lab name is"),
    ];
    for (text, want) in cases {
        let got = err(&text);
        assert!(got.contains(want), "{text}\nwant: {want}\ngot:  {got}");
    }
}

#[test]
fn example_topologies_parse() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("topologies");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            let text = std::fs::read_to_string(&path).unwrap();
            let stem = path.file_stem().unwrap().to_str().unwrap();
            Topology::parse(&text, stem).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            n += 1;
        }
    }
    assert!(n >= 2, "no example topologies in {}", dir.display());
}
