import Foundation

/// `--report FILE.svg`: a hand-written SVG timeline of a soak, readable in any browser.
///
/// One chart, time on the x axis, MiB on the y axis: the effective available memory the
/// monitor saw (blue), the harness's RSS (orange) and the bytes its caches held (green), with
/// the warning and critical thresholds dashed, background bands where the monitor's level was
/// warning (amber) or critical (red), a triangle at each delivered warning (amber) or critical
/// (red) warning, and a grey tick at each simulated relaunch. A legend and the run's key
/// numbers sit above the chart.
package enum SoakReport {
    package static func svg(summary: SoakSummary, run: SoakRun) -> String {
        let width = 1100.0, height = 560.0
        let left = 70.0, right = 30.0, top = 110.0, bottom = 60.0
        let plotWidth = width - left - right, plotHeight = height - top - bottom
        let mib = Double(1 << 20)
        let duration = max(run.end - run.start, 1)
        let samples = run.samples.filter { $0.t != nil }
        let totalMiB = samples.compactMap(\.total).map { Double($0) / mib }.max() ?? Double(summary.plan.limit) / mib
        let peak = max(totalMiB, samples.compactMap(\.rss).map { Double($0) / mib }.max() ?? 0)
        let yMax = niceCeiling(peak * 1.05)

        func x(_ t: Double) -> Double { left + (t - run.start) / duration * plotWidth }
        func y(_ megabytes: Double) -> Double { top + plotHeight - megabytes / yMax * plotHeight }
        func f(_ value: Double) -> String { String(format: "%.1f", value) }

        var svg = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" viewBox="0 0 \(Int(width)) \(Int(height))" font-family="Helvetica, Arial, sans-serif" font-size="12">
            <rect width="100%" height="100%" fill="#ffffff"/>

            """
        // Title and numbers.
        let delays = summary.delays
        let status =
            summary.ok
            ? "all invariants held"
            : "BROKEN: " + summary.invariants.filter { !$0.ok }.map(\.name).joined(separator: ", ")
        svg += text(
            left, 24,
            "statectl soak — \(summary.plan.mode.rawValue) pressure, limit \(Int(Double(summary.plan.limit) / mib)) MiB, \(summary.plan.controllers) controllers, \(String(format: "%.0f", duration)) s — \(status)",
            size: 15, weight: "bold")
        let delayText =
            delays.isEmpty
            ? "-"
            : String(format: "%.1f / %.1f / %.1f ms", delays.first!, SoakSummary.percentile(delays, 50)!, delays.last!)
        svg += text(
            left, 44,
            "warnings delivered: \(run.warnings.count) (\(summary.criticalWarnings.count) critical), undelivered \(summary.final.undelivered); delay min/median/max \(delayText); relaunches \(summary.simulatedRelaunches.count); lost \(summary.relaunchLost + (summary.verification?.lost ?? 0)), corrupt \(summary.relaunchCorrupt + (summary.verification?.corrupt ?? 0)), violations \(summary.final.violations), leaked \(summary.leaked)",
            size: 12)

        // Level bands.
        var bandStart: (Double, Int)?
        for sample in samples {
            let level = sample.level ?? 0, t = sample.t!
            if let (start, current) = bandStart, current != level {
                svg += band(x(start), x(t), top, plotHeight, current)
                bandStart = nil
            }
            if bandStart == nil && level > 0 { bandStart = (t, level) }
        }
        if let (start, current) = bandStart { svg += band(x(start), x(run.end), top, plotHeight, current) }

        // Grid and axes.
        let step = yMax / 5
        for index in 0...5 {
            let value = step * Double(index)
            svg +=
                "<line x1=\"\(f(left))\" y1=\"\(f(y(value)))\" x2=\"\(f(left + plotWidth))\" y2=\"\(f(y(value)))\" stroke=\"#e0e0e0\"/>\n"
            svg += text(left - 8, y(value) + 4, "\(Int(value.rounded())) MiB", anchor: "end", fill: "#555")
        }
        let timeStep = niceTimeStep(duration)
        var tick = 0.0
        while tick <= duration + 0.001 {
            svg +=
                "<line x1=\"\(f(x(run.start + tick)))\" y1=\"\(f(top + plotHeight))\" x2=\"\(f(x(run.start + tick)))\" y2=\"\(f(top + plotHeight + 5))\" stroke=\"#555\"/>\n"
            svg += text(x(run.start + tick), top + plotHeight + 18, timeLabel(tick), anchor: "middle", fill: "#555")
            tick += timeStep
        }
        svg +=
            "<rect x=\"\(f(left))\" y=\"\(f(top))\" width=\"\(f(plotWidth))\" height=\"\(f(plotHeight))\" fill=\"none\" stroke=\"#888\"/>\n"
        svg += text(left + plotWidth / 2, height - 14, "time since start", anchor: "middle", fill: "#333")

        // Thresholds (25 % and 15 % of the effective total).
        for (fraction, label, color) in [
            (0.25, "warning threshold (25 %)", "#d98c00"), (0.15, "critical threshold (15 %)", "#c62828"),
        ] {
            let value = totalMiB * fraction
            svg +=
                "<line x1=\"\(f(left))\" y1=\"\(f(y(value)))\" x2=\"\(f(left + plotWidth))\" y2=\"\(f(y(value)))\" stroke=\"\(color)\" stroke-dasharray=\"6 4\" stroke-width=\"1\"/>\n"
            svg += text(left + 6, y(value) - 4, label, fill: color, size: 10, halo: true)
        }

        // Series.
        svg += polyline(
            samples.compactMap { s in s.available.map { (x(s.t!), y(Double($0) / mib)) } }, color: "#1f77b4")
        svg += polyline(samples.compactMap { s in s.rss.map { (x(s.t!), y(Double($0) / mib)) } }, color: "#ff7f0e")
        svg += polyline(samples.compactMap { s in s.cache.map { (x(s.t!), y(Double($0) / mib)) } }, color: "#2ca02c")

        // Relaunches and warnings.
        for relaunch in summary.simulatedRelaunches {
            guard let t = relaunch.t else { continue }
            svg +=
                "<line x1=\"\(f(x(t)))\" y1=\"\(f(top))\" x2=\"\(f(x(t)))\" y2=\"\(f(top + 8))\" stroke=\"#777\" stroke-width=\"2\"/>\n"
        }
        for warning in run.warnings {
            guard let t = warning.raised_at else { continue }
            let critical = warning.level == 2
            let cx = x(t), cy = top + plotHeight - 2
            let color = critical ? "#c62828" : "#e69500"
            svg +=
                "<polygon points=\"\(f(cx - 5)),\(f(cy)) \(f(cx + 5)),\(f(cy)) \(f(cx)),\(f(cy - 10))\" fill=\"\(color)\"><title>\(critical ? "critical" : "warning") at \(String(format: "%.1f", t - run.start)) s, delay \(String(format: "%.2f", (warning.delay ?? 0) * 1000)) ms, released \((warning.released ?? 0) >> 10) KiB</title></polygon>\n"
        }

        // Legend.
        let legend: [(String, String, String)] = [
            ("line", "#1f77b4", "effective available memory"),
            ("line", "#ff7f0e", "harness RSS"),
            ("line", "#2ca02c", "cache bytes held"),
            ("tri", "#e69500", "warning delivered"),
            ("tri", "#c62828", "critical delivered"),
            ("box", "#fff3cd", "level warning"),
            ("box", "#fde0e0", "level critical"),
            ("tick", "#777", "relaunch"),
        ]
        var lx = left, ly = 72.0
        for (kind, color, label) in legend {
            switch kind {
            case "line":
                svg +=
                    "<line x1=\"\(f(lx))\" y1=\"\(f(ly))\" x2=\"\(f(lx + 22))\" y2=\"\(f(ly))\" stroke=\"\(color)\" stroke-width=\"2.5\"/>\n"
            case "tri":
                svg +=
                    "<polygon points=\"\(f(lx + 6)),\(f(ly + 5)) \(f(lx + 16)),\(f(ly + 5)) \(f(lx + 11)),\(f(ly - 5))\" fill=\"\(color)\"/>\n"
            case "box":
                svg +=
                    "<rect x=\"\(f(lx))\" y=\"\(f(ly - 6))\" width=\"22\" height=\"12\" fill=\"\(color)\" stroke=\"#ccc\"/>\n"
            default:
                svg +=
                    "<line x1=\"\(f(lx + 11))\" y1=\"\(f(ly - 6))\" x2=\"\(f(lx + 11))\" y2=\"\(f(ly + 6))\" stroke=\"\(color)\" stroke-width=\"2\"/>\n"
            }
            svg += text(lx + 28, ly + 4, label)
            lx += 28 + Double(label.count) * 6.4 + 18
        }
        svg += "</svg>\n"
        return svg
    }

    private static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
    }

    private static func text(
        _ x: Double, _ y: Double, _ content: String, anchor: String = "start", fill: String = "#222",
        size: Int = 12, weight: String = "normal", halo: Bool = false
    ) -> String {
        // A white halo (stroke painted under the fill) keeps a label readable over dense data.
        let outline = halo ? " stroke=\"#ffffff\" stroke-width=\"3\" paint-order=\"stroke\"" : ""
        return String(
            format: "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%@\" fill=\"%@\" font-size=\"%d\" font-weight=\"%@\"", x,
            y,
            anchor as NSString, fill as NSString, size, weight as NSString) + outline + ">" + escape(content)
            + "</text>\n"
    }

    private static func band(_ x0: Double, _ x1: Double, _ top: Double, _ height: Double, _ level: Int) -> String {
        let color = level >= 2 ? "#fde0e0" : "#fff3cd"
        return String(
            format: "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%@\"/>\n", x0, top,
            max(x1 - x0, 1), height, color as NSString)
    }

    private static func polyline(_ points: [(Double, Double)], color: String) -> String {
        guard !points.isEmpty else { return "" }
        let list = points.map { String(format: "%.1f,%.1f", $0.0, $0.1) }.joined(separator: " ")
        return
            "<polyline points=\"\(list)\" fill=\"none\" stroke=\"\(color)\" stroke-width=\"1.8\" stroke-linejoin=\"round\"/>\n"
    }

    private static func niceCeiling(_ value: Double) -> Double {
        for step in [16.0, 32, 64, 128, 256] where value / step <= 8 { return (value / step).rounded(.up) * step }
        return (value / 512).rounded(.up) * 512
    }

    private static func niceTimeStep(_ duration: Double) -> Double {
        for step in [5.0, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600] where duration / step <= 12 { return step }
        return 7200
    }

    private static func timeLabel(_ seconds: Double) -> String {
        seconds >= 120 ? String(format: "%.0f min", seconds / 60) : String(format: "%.0f s", seconds)
    }
}
