//! The status page (`GET /` on `--http`): one HTML document with no external assets, the
//! topology drawn as SVG generated here from the service's status (routers on a circle, a
//! link solid green when both ends report it up, dashed red otherwise), the routers' FIB and
//! cache policy versions, and a reload every 2 s so that link state stays live.

use std::fmt::Write as _;

use super::Status;

/// Escapes text for HTML.
fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The page for `s`.
pub(super) fn render(s: &Status) -> String {
    let names: Vec<&str> = s.fibs.iter().map(|f| f.router.as_str()).collect();
    let n = names.len().max(1) as f64;
    let pos = |name: &str| -> Option<(f64, f64)> {
        let i = names.iter().position(|x| *x == name)? as f64;
        let a = std::f64::consts::TAU * i / n - std::f64::consts::FRAC_PI_2;
        Some((300.0 + 220.0 * a.cos(), 260.0 + 200.0 * a.sin()))
    };
    let mut svg = String::from(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"600\" height=\"520\" viewBox=\"0 0 600 520\">",
    );
    for l in &s.link_views {
        let (Some((x1, y1)), Some((x2, y2))) = (pos(&l.a), pos(&l.b)) else {
            continue;
        };
        let up = l.cost.is_some();
        let (class, style) = if up {
            ("link up", "stroke:#2a2;stroke-width:3")
        } else {
            (
                "link down",
                "stroke:#c22;stroke-width:2;stroke-dasharray:6 4",
            )
        };
        let _ = write!(
            svg,
            "<line class=\"{class}\" data-a=\"{}\" data-b=\"{}\" x1=\"{x1:.0}\" y1=\"{y1:.0}\" x2=\"{x2:.0}\" y2=\"{y2:.0}\" style=\"{style}\"><title>{} - {}: {}</title></line>",
            esc(&l.a),
            esc(&l.b),
            esc(&l.a),
            esc(&l.b),
            l.cost.map_or_else(|| "down".to_owned(), |c| format!("up, cost {c}"))
        );
    }
    for f in &s.fibs {
        let Some((x, y)) = pos(&f.router) else {
            continue;
        };
        let fill = if f.connected { "#cdf" } else { "#ddd" };
        let _ = write!(
            svg,
            "<g class=\"router\"><circle cx=\"{x:.0}\" cy=\"{y:.0}\" r=\"18\" style=\"fill:{fill};stroke:#225\"/><text x=\"{x:.0}\" y=\"{:.0}\" text-anchor=\"middle\" font-size=\"12\">{}</text></g>",
            y + 34.0,
            esc(&f.router)
        );
    }
    svg.push_str("</svg>");
    let mut rows = String::new();
    for f in &s.fibs {
        let _ = write!(
            rows,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&f.router),
            if f.connected { "yes" } else { "no" },
            f.fib.len(),
            f.version,
            f.acked,
            f.cs_versions.0,
            f.cs_versions.1
        );
    }
    let mut links = String::new();
    for l in &s.link_views {
        let side = |v: Option<bool>| match v {
            Some(true) => "up",
            Some(false) => "down",
            None => "not reported",
        };
        let _ = write!(
            links,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&l.a),
            esc(&l.b),
            side(l.a_up),
            side(l.b_up),
            l.cost
                .map_or_else(|| "down".to_owned(), |c| format!("up ({c})"))
        );
    }
    format!(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><meta http-equiv=\"refresh\" content=\"2\"><title>namewayctl</title>\
<style>body{{font-family:sans-serif}}table{{border-collapse:collapse}}td,th{{border:1px solid #999;padding:2px 6px}}</style></head><body>\
<h1>namewayctl</h1>{svg}\
<h2>Routers</h2><table><tr><th>router</th><th>connected</th><th>FIB entries</th><th>FIB version</th><th>acked</th><th>cs version</th><th>cs acked</th></tr>{rows}</table>\
<h2>Links</h2><table><tr><th>a</th><th>b</th><th>a reports</th><th>b reports</th><th>state</th></tr>{links}</table>\
</body></html>\n"
    )
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::super::state::{LinkView, RouterFib};
    use super::*;

    fn status(b_up: Option<bool>, cost: Option<u64>) -> Status {
        let fib = |r: &str| RouterFib {
            router: r.into(),
            connected: true,
            version: 3,
            acked: 3,
            fib: Arc::default(),
            cs_versions: (1, 1),
        };
        Status {
            fibs: vec![fib("/example/r1"), fib("/example/r2")],
            link_views: vec![LinkView {
                a: "/example/r1".into(),
                b: "/example/r2".into(),
                a_up: Some(true),
                b_up,
                cost,
            }],
            ..Status::default()
        }
    }

    #[test]
    fn the_page_draws_each_router_and_a_link_by_its_state() {
        let up = render(&status(Some(true), Some(10)));
        assert!(up.contains("<svg"), "{up}");
        assert_eq!(up.matches("class=\"router\"").count(), 2);
        assert!(up.contains("class=\"link up\" data-a=\"/example/r1\" data-b=\"/example/r2\""));
        assert!(!up.contains("class=\"link down\""));
        assert!(
            !up.contains("src=") && !up.contains("href="),
            "no external asset"
        );
        let down = render(&status(Some(false), None));
        assert!(down.contains("class=\"link down\" data-a=\"/example/r1\""));
        assert!(!down.contains("class=\"link up\""));
        assert!(down.contains("<td>down</td><td>down</td>"), "{down}");
    }
}
