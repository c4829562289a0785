import ArgumentParser
import Foundation
import StateStore

extension Statectl {
    /// `statectl monitor`: memory pressure as the library's monitor sees it, one line per sample.
    struct Monitor: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print memory samples: host and cgroup memory, PSI, effective available and level.",
            discussion: """
                Reads what MemoryPressureMonitor reads: /proc/meminfo, the process's memory cgroup \
                (v2 or v1, its limit the smallest of memory.max and memory.high up the hierarchy) \
                and memory PSI (the cgroup's memory.pressure, else /proc/pressure/memory). No \
                database is opened.

                Columns: host total and available (MemAvailable); the cgroup's limit, usage and \
                available (limit − (usage − inactive_file)), "none" without a cgroup and "max" \
                without a limit; PSI some and full avg10 (%, "-" without PSI); effective available \
                (the smaller of host and cgroup) and its percentage of the effective total; and the \
                level those numbers indicate on their own (the monitor's instantaneous level: \
                warning at ≤ 25 % available or PSI some avg10 ≥ 10, critical at ≤ 15 % or PSI full \
                avg10 ≥ 30; a running monitor adds hysteresis before it raises a warning). Sizes \
                in the table are binary units (MiB = 2^20 bytes); JSON has bytes.

                --root DIR reads a copy of the files under DIR instead of / (DIR/proc/meminfo, \
                DIR/proc/pressure/memory, DIR/proc/self/cgroup, DIR/proc/self/mountinfo, \
                DIR/sys/fs/cgroup/...). --cgroup PATH (relative to the root) watches that cgroup \
                directory instead of the process's own.

                Without --once or --count the monitor runs until interrupted. Exit 3 with one line \
                on stderr when /proc/meminfo cannot be read or parsed.

                Example:
                  statectl monitor --once
                  statectl monitor --interval 500ms --count 10 --json
                  statectl monitor --cgroup /sys/fs/cgroup/system.slice/app.service

                JSON (--json): JSON Lines, one object per sample: {"schema": 1, "kind": "sample", \
                "time", "level" ("normal", "warning", "critical"), "host": {"total", "available", \
                "available_is_estimated"}, "cgroup": null or {"version", "path" (the memory cgroup \
                read: the process's own, or the nearest ancestor with the memory controller), \
                "numbers_from" (the cgroup whose limit, usage, inactive_file and available these \
                are: the one with the least headroom, the path itself or an ancestor), "limit" (null \
                when unlimited), "usage", "inactive_file", "available" (null when unlimited)}, \
                "pressure": null or {"file" (where it was read), "some_avg10", "full_avg10"} (null \
                members without that line), "effective_total", "effective_available", "available_percent"}

                --events runs the monitor itself (PSI triggers, adaptive polling) and prints one \
                line per event instead of samples: time, level, previous level, trigger \
                (available_memory, pressure_stall, recovery, repeat), source (poll, \
                pressure_stall_trigger, systemd_watch) and, for a wake-up, how long before the next \
                poll it came (ahead_of_poll_ms); --count stops after that many events.
                """
        )

        @Flag(help: "Print one sample and exit.")
        var once = false

        @Option(
            help: ArgumentHelp("Time between samples: 1s, 500ms, 2m. (default: 1s)", valueName: "duration"),
            transform: { try DurationValue(parsing: $0) })
        var interval: DurationValue = try! DurationValue(parsing: "1s")

        @Option(help: "Stop after this many samples.")
        var count: Int?

        @Option(
            help: ArgumentHelp("A directory standing in for / (a fixture tree).", valueName: "dir"),
            completion: .directory)
        var root = "/"

        @Option(
            help: ArgumentHelp(
                "A cgroup directory, relative to the root, to watch instead of the process's own.", valueName: "path"))
        var cgroup: String?

        @Flag(help: "Run the monitor (PSI triggers, adaptive polling) and print its events, not samples.")
        var events = false

        @OptionGroup var output: OutputOptions

        func validate() throws {
            _ = try interval.requiring(atLeast: 10, "--interval")
            if let count, count < 1 { throw ValidationError("--count must be 1 or more.") }
            if once && count != nil { throw ValidationError("Use either --once or --count.") }
        }

        func run() async throws {
            let monitor = try MemoryPressureMonitor(configuration: .init(root: root, cgroupPath: cgroup))
            if events { return try await watchEvents(monitor) }
            let limit = once ? 1 : count
            let pause = interval.duration
            var taken = 0
            while limit.map({ taken < $0 }) ?? true {
                let sample: MemorySample
                do {
                    sample = try monitor.sample()
                } catch {
                    throw CLIError(message: oneLine(error.description), status: .cannotOpen)
                }
                let now = Date()
                // Written unbuffered, so a pipe (`| jq`) sees each sample as it is taken.
                var text = ""
                if output.json {
                    text = Self.json(sample, at: now, root: root).serialized() + "\n"
                } else {
                    if taken == 0 { text = Self.header + "\n" }
                    text += Self.line(sample, at: now) + "\n"
                }
                // A reader that went away (`monitor | head`) ends the watch: nothing reads on.
                if Output.standardOutput(text) != 0 { break }
                taken += 1
                if let limit, taken >= limit { break }
                try await Task.sleep(for: pause)
            }
        }

        /// `--events`: the monitor's thread runs; every event is printed as it is raised.
        private func watchEvents(_ monitor: MemoryPressureMonitor) async throws {
            do {
                _ = try monitor.sample()
            } catch {
                throw CLIError(message: oneLine(error.description), status: .cannotOpen)
            }
            let stream = monitor.events
            monitor.start()
            defer { monitor.stop() }
            if !output.json { Output.standardError("watching: \(monitor.watchDescription)\n") }
            var taken = 0
            for await event in stream {
                let sample = monitor.lastSample
                let line =
                    output.json
                    ? Self.eventJSON(event, sample: sample, watch: monitor.watchDescription).serialized()
                    : Self.eventLine(event)
                if Output.standardOutput(line + "\n") != 0 { break }
                taken += 1
                if let count, taken >= count { break }
            }
        }

        static func milliseconds(_ duration: Duration) -> Double {
            duration.seconds * 1000
        }

        static func eventJSON(_ event: MemoryPressureEvent, sample: MemorySample?, watch: String) -> JSON {
            func number(_ value: Double) -> JSON { .number(String(format: "%.2f", value)) }
            return Output.document(
                kind: "event",
                [
                    ("time", .string(Format.iso8601(event.time))),
                    ("level", .string(EntryOutput.levelName(event.level))),
                    ("previous", .string(EntryOutput.levelName(event.previousLevel))),
                    ("trigger", .string(snake(event.trigger.rawValue))),
                    ("source", .string(snake(event.source.rawValue))),
                    ("ahead_of_poll_ms", event.aheadOfPoll.map { number(milliseconds($0)) } ?? .null),
                    ("available", .int(event.availableBytes)),
                    ("total", .int(event.totalBytes)),
                    ("some_avg10", sample?.pressure?.some.map { number($0.avg10) } ?? .null),
                    ("full_avg10", sample?.pressure?.full.map { number($0.avg10) } ?? .null),
                    ("watch", .string(watch)),
                ])
        }

        static func eventLine(_ event: MemoryPressureEvent) -> String {
            var line =
                "\(Format.iso8601(event.time))  \(EntryOutput.levelName(event.previousLevel)) -> \(EntryOutput.levelName(event.level))"
            line += "  \(snake(event.trigger.rawValue)) via \(snake(event.source.rawValue))"
            if let ahead = event.aheadOfPoll {
                line += String(format: ", %.1f ms before the next poll", milliseconds(ahead))
            }
            return line
        }

        /// `pressureStallTrigger` → `pressure_stall_trigger`.
        static func snake(_ name: String) -> String {
            name.unicodeScalars.reduce(into: "") { text, scalar in
                if CharacterSet.uppercaseLetters.contains(scalar) {
                    text += "_" + String(scalar).lowercased()
                } else {
                    text.unicodeScalars.append(scalar)
                }
            }
        }

        // MARK: Formatting

        static let columns: [(title: String, width: Int)] = [
            ("TIME (UTC)", 19), ("HOST TOTAL", 10), ("HOST AVAIL", 10), ("CG LIMIT", 10), ("CG USAGE", 10),
            ("CG AVAIL", 10), ("PSI SOME", 8), ("PSI FULL", 8), ("EFFECTIVE", 10), ("AVAIL %", 7), ("LEVEL", 0),
        ]

        static var header: String { row(columns.map(\.title)) }

        /// One table row; every column but the first and last is right-aligned to its width.
        static func row(_ cells: [String]) -> String {
            zip(columns, cells).enumerated().map { index, pair in
                let (column, cell) = pair
                let padding = String(repeating: " ", count: max(0, column.width - cell.count))
                if index == 0 { return cell + padding }
                return index == columns.count - 1 ? cell : padding + cell
            }.joined(separator: "  ")
        }

        static func line(_ sample: MemorySample, at time: Date) -> String {
            var cells = [
                Format.table(time), Format.bytes(sample.meminfo.total), Format.bytes(sample.meminfo.available),
            ]
            if let cgroup = sample.cgroup {
                cells += [
                    cgroup.limit.map(Format.bytes) ?? "max", Format.bytes(cgroup.usage),
                    cgroup.available.map(Format.bytes) ?? "max",
                ]
            } else {
                cells += ["none", "none", "none"]
            }
            cells.append(sample.pressure?.some.map { String(format: "%.2f", $0.avg10) } ?? "-")
            cells.append(sample.pressure?.full.map { String(format: "%.2f", $0.avg10) } ?? "-")
            cells.append(Format.bytes(sample.effectiveAvailable))
            cells.append(String(format: "%.1f", sample.availablePercent))
            cells.append(EntryOutput.levelName(sample.level))
            return row(cells)
        }

        static func json(_ sample: MemorySample, at time: Date, root: String) -> JSON {
            func number(_ value: Double) -> JSON { .number(String(format: "%.2f", value)) }
            let cgroup: JSON =
                sample.cgroup.map { cgroup in
                    .object([
                        ("version", .int(cgroup.version.rawValue)),
                        ("path", .string(relative(cgroup.path, to: root))),
                        (
                            "numbers_from",
                            .string(
                                relative((cgroup.bindingLevel ?? cgroup.hierarchy.first)?.path ?? cgroup.path, to: root)
                            )
                        ),
                        ("limit", cgroup.limit.map { .int($0) } ?? .null),
                        ("usage", .int(cgroup.usage)),
                        ("inactive_file", .int(cgroup.inactiveFile)),
                        ("available", cgroup.available.map { .int($0) } ?? .null),
                    ])
                } ?? .null
            let pressure: JSON =
                sample.pressure.map { pressure in
                    .object([
                        (
                            "file",
                            .string(
                                sample.cgroup.flatMap {
                                    $0.pressure != nil ? relative($0.path + "/memory.pressure", to: root) : nil
                                }
                                    ?? "/proc/pressure/memory")
                        ),
                        ("some_avg10", pressure.some.map { number($0.avg10) } ?? .null),
                        ("full_avg10", pressure.full.map { number($0.avg10) } ?? .null),
                    ])
                } ?? .null
            return Output.document(
                kind: "sample",
                [
                    ("time", .string(Format.iso8601(time))),
                    ("level", .string(EntryOutput.levelName(sample.level))),
                    (
                        "host",
                        .object([
                            ("total", .int(sample.meminfo.total)),
                            ("available", .int(sample.meminfo.available)),
                            ("available_is_estimated", .bool(sample.meminfo.availableIsEstimated)),
                        ])
                    ),
                    ("cgroup", cgroup),
                    ("pressure", pressure),
                    ("effective_total", .int(sample.effectiveTotal)),
                    ("effective_available", .int(sample.effectiveAvailable)),
                    ("available_percent", number(sample.availablePercent)),
                ])
        }

        /// `path` as seen from inside `root` (`/sys/fs/cgroup/app`, not `/tmp/tree/sys/fs/cgroup/app`).
        static func relative(_ path: String, to root: String) -> String {
            var root = root
            while root.count > 1 && root.hasSuffix("/") { root.removeLast() }
            guard root != "/", path.hasPrefix(root + "/") else { return path }
            return String(path.dropFirst(root.count))
        }
    }
}
