//! The bar chart of a run: ns per item for every kernel and variant at one CPU level, drawn as
//! SVG with plotters. Groups of bars per kernel, one colour per variant, and a logarithmic axis,
//! since CPython is about three orders of magnitude above the vectorized native kernels.

use std::path::Path;

use plotters::prelude::*;

use crate::kernels::Kernel;
use crate::report::{Level, VARIANTS};

/// Each variant's colour, in [`VARIANTS`]' order.
const COLOURS: [RGBColor; 7] = [
    RGBColor(0x33, 0x33, 0x33),
    RGBColor(0xd9, 0x5f, 0x02),
    RGBColor(0x1b, 0x9e, 0x77),
    RGBColor(0x66, 0xa6, 0x1e),
    RGBColor(0x75, 0x70, 0xb3),
    RGBColor(0x1f, 0x78, 0xb4),
    RGBColor(0xa6, 0xce, 0xe3),
];

/// Draws the chart for `level` (the summaries of one CPU level) to `path`.
pub fn draw(path: &Path, title: &str, level: &Level) -> Result<(), String> {
    let variants: Vec<(usize, &str)> =
        VARIANTS.iter().copied().enumerate().filter(|(_, v)| level.contains_key(*v)).collect();
    let values: Vec<f64> = level.values().flat_map(|m| m.values()).filter_map(|s| s.ns_per_item()).collect();
    if values.is_empty() {
        return Err("no timings to draw".into());
    }
    let low = values.iter().copied().fold(f64::INFINITY, f64::min);
    let high = values.iter().copied().fold(0.0, f64::max);
    // One empty decade on top holds the legend clear of the bars.
    let (y_min, y_max) = (10f64.powf(low.log10().floor()), 10f64.powf(high.log10().ceil() + 1.0));
    let kernels = Kernel::ALL.len() as f64;

    let root = SVGBackend::new(path, (1100, 560)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(70)
        .build_cartesian_2d(0f64..kernels, (y_min..y_max).log_scale())
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(Kernel::ALL.len() * 2 + 1)
        .x_label_formatter(&|x| {
            let i = x.floor() as usize;
            // Label each group at its centre only.
            if (x - (i as f64 + 0.5)).abs() < 1e-6 {
                Kernel::ALL.get(i).map(|k| k.name().to_string()).unwrap_or_default()
            } else {
                String::new()
            }
        })
        .y_desc("ns per item (median, log scale; lower is faster)")
        .y_label_formatter(&|y| crate::report::fmt3(*y))
        .draw()
        .map_err(|e| e.to_string())?;

    let slots = variants.len() as f64;
    let width = 0.8 / slots;
    for (slot, (colour_index, variant)) in variants.iter().enumerate() {
        let colour = COLOURS[*colour_index];
        let bars: Vec<Rectangle<(f64, f64)>> = Kernel::ALL
            .iter()
            .enumerate()
            .filter_map(|(k, kernel)| {
                let v = level.get(*variant)?.get(kernel)?.ns_per_item()?;
                let x0 = k as f64 + 0.1 + slot as f64 * width;
                Some(Rectangle::new([(x0, y_min), (x0 + width * 0.92, v)], colour.filled()))
            })
            .collect();
        chart
            .draw_series(bars)
            .map_err(|e| e.to_string())?
            .label(*variant)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], colour.filled()));
    }
    legend_and_present(&mut chart, &root, SeriesLabelPosition::UpperLeft)
}

/// Draws `chart`'s legend at `position` in the bench's style (a white, bordered box over the
/// plot) and writes `root` out: how every chart of the bench ends.
pub fn legend_and_present<'a, DB, CT>(
    chart: &mut ChartContext<'a, DB, CT>,
    root: &DrawingArea<DB, plotters::coord::Shift>,
    position: SeriesLabelPosition,
) -> Result<(), String>
where
    DB: DrawingBackend + 'a,
    DB::ErrorType: 'static,
    CT: CoordTranslate,
{
    chart
        .configure_series_labels()
        .position(position)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(|e| e.to_string())?;
    root.present().map_err(|e| e.to_string())
}
