//! The HTTP bench's charts, drawn as SVG with plotters: the bar chart of median req/s per case,
//! one bar per server (linear axis: every server is within one order of magnitude), and the
//! soak's line chart of each server's resident set over time.

use std::path::Path;

use plotters::prelude::*;

use super::cases::CASES;
use super::report::{Summaries, thousands};
use super::server::NAMES;

/// Each server's colour, in [`NAMES`]' order: greys for the baselines, oranges for the
/// Rust-built Nagi, greens for the LLVM-built (lighter: `--log warn`; darker: with metrics).
const COLOURS: [RGBColor; 10] = [
    RGBColor(0x33, 0x33, 0x33),
    RGBColor(0x99, 0x99, 0x99),
    RGBColor(0xd9, 0x5f, 0x02),
    RGBColor(0x1b, 0x9e, 0x77),
    RGBColor(0xfd, 0xb8, 0x63),
    RGBColor(0x8f, 0xd1, 0xbb),
    RGBColor(0x8c, 0x3d, 0x01),
    RGBColor(0x0e, 0x5c, 0x45),
    RGBColor(0x7f, 0x3b, 0x08),
    RGBColor(0x2d, 0x00, 0x4b),
];

/// Draws the chart of `summaries` to `path`.
pub fn draw(path: &Path, title: &str, summaries: &Summaries) -> Result<(), String> {
    let servers: Vec<(usize, &str)> =
        NAMES.iter().copied().enumerate().filter(|(_, n)| summaries.contains_key(*n)).collect();
    let high = summaries.values().flat_map(|m| m.values()).map(|s| s.rps).filter(|v| v.is_finite()).fold(0.0, f64::max);
    if high <= 0.0 {
        return Err("no req/s to draw".into());
    }
    // Room above the tallest bar for the legend.
    let y_max = high * 1.35;
    let root = SVGBackend::new(path, (1100, 560)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(80)
        .build_cartesian_2d(0f64..CASES.len() as f64, 0f64..y_max)
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(CASES.len() * 2 + 1)
        .x_label_formatter(&|x| {
            let i = x.floor() as usize;
            if (x - (i as f64 + 0.5)).abs() < 1e-6 {
                CASES.get(i).map(|c| c.title.to_string()).unwrap_or_default()
            } else {
                String::new()
            }
        })
        .y_desc("requests per second (median; higher is better)")
        .y_label_formatter(&|y| thousands(*y))
        .draw()
        .map_err(|e| e.to_string())?;
    let width = 0.8 / servers.len() as f64;
    for (slot, (colour_index, server)) in servers.iter().enumerate() {
        let colour = COLOURS[*colour_index];
        let bars: Vec<Rectangle<(f64, f64)>> = CASES
            .iter()
            .enumerate()
            .filter_map(|(k, case)| {
                let v = summaries.get(*server)?.get(case.name)?.rps;
                let x0 = k as f64 + 0.1 + slot as f64 * width;
                v.is_finite().then(|| Rectangle::new([(x0, 0.0), (x0 + width * 0.92, v)], colour.filled()))
            })
            .collect();
        chart
            .draw_series(bars)
            .map_err(|e| e.to_string())?
            .label(*server)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], colour.filled()));
    }
    crate::chart::legend_and_present(&mut chart, &root, SeriesLabelPosition::UpperRight)
}

/// Draws each server's RSS over a soak to `path`: `series` holds, per server, its samples as
/// (seconds since the load started, MiB); `limit_mib` is drawn as a red line (the gate).
pub fn draw_rss(path: &Path, title: &str, series: &[(&str, Vec<(f64, f64)>)], limit_mib: f64) -> Result<(), String> {
    let points = series.iter().flat_map(|(_, s)| s.iter());
    let (t_max, mib_max) = points.fold((0.0, limit_mib), |(t, m), (x, y)| (f64::max(t, *x), f64::max(m, *y)));
    if t_max <= 0.0 {
        return Err("no RSS samples to draw".into());
    }
    let root = SVGBackend::new(path, (900, 480)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(60)
        .build_cartesian_2d(0f64..t_max + 1.0, 0f64..mib_max * 1.25)
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .x_desc("seconds since the load started")
        .y_desc("RSS, MiB (VmRSS, sampled each second)")
        .draw()
        .map_err(|e| e.to_string())?;
    let red = RGBColor(0xcc, 0x00, 0x00);
    chart
        .draw_series(std::iter::once(PathElement::new(vec![(0.0, limit_mib), (t_max + 1.0, limit_mib)], red)))
        .map_err(|e| e.to_string())?
        .label(format!("gate: {limit_mib} MiB"))
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 12, y)], red));
    for (server, samples) in series {
        let colour = NAMES.iter().position(|n| n == server).map_or(BLACK, |i| COLOURS[i]);
        let style = colour.stroke_width(2);
        chart
            .draw_series(std::iter::once(PathElement::new(samples.clone(), style)))
            .map_err(|e| e.to_string())?
            .label(*server)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 12, y)], style));
    }
    crate::chart::legend_and_present(&mut chart, &root, SeriesLabelPosition::LowerRight)
}
