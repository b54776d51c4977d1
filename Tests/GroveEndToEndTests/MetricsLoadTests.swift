import Foundation
import Testing

extension EndToEnd {
    /// Issue 38's done-when for metrics: fsm-load drives a known number of events through a
    /// topology of two workers with metrics on; a real HTTP GET of the coordinator's endpoint
    /// before and after shows the counters moved by exactly those events and the transition
    /// histogram filled with them, summed across both workers, and fsm-load reports the same
    /// figures beside its own.
    @Suite(.timeLimit(.minutes(2)))
    struct MetricsLoadTests {
        static let topology = TopologyFile(
            name: "metrics-load", transport: .ipc,
            workers: [.init(name: "data", count: 2)],
            machines: [.init(name: "counter", type: "Counter", worker: "data", keyed: true)],
            metrics: #"{ "listen": "127.0.0.1:0" }"#
        )

        struct Report: Decodable {
            struct Figures: Decodable {
                var routed: Int
                var replies: Int
                var busy: Int
                var repliesDropped: Int
                var workerEvents: [String: Int]
                var transitions: Int
                var transitionMicros: [String: Double]
            }
            struct Run: Decodable {
                var mode: String
                var sent: Int
                var acknowledged: Int
                var topologyFigures: Figures?
            }
            var runs: [Run]
        }

        static let transition = "grove_worker_transition_seconds"

        /// `name`'s samples summed by their `worker` label (a line per series as the coordinator
        /// prints them: `name{…,worker="data-1"} 12`).
        static func byWorker(_ name: String, in scrape: Scrape) -> [String: Double] {
            var sums: [String: Double] = [:]
            for line in scrape.text.split(separator: "\n") where line.hasPrefix(name + "{") {
                guard let worker = line.range(of: #"worker=""#).map({ line[$0.upperBound...].prefix { $0 != "\"" } }),
                      let value = line.split(separator: " ").last.flatMap({ Double($0) }) else { continue }
                sums[String(worker), default: 0] += value
            }
            return sums
        }

        static func difference(_ after: [String: Double], _ before: [String: Double]) -> [String: Double] {
            after.reduce(into: [:]) { $0[$1.key] = $1.value - (before[$1.key] ?? 0) }.filter { $0.value != 0 }
        }

        @Test func fsmLoadsEventsAreCountedAndTimedSummedAcrossTwoWorkers() async throws {
            try await withCluster(Self.topology) { cluster in
                let line = try #require(cluster.launch.stdout.split(separator: "\n").first { $0.hasPrefix("metrics ") })
                let url = String(line.dropFirst("metrics ".count))
                let before = try await eventually("a first scrape of \(url)") { try? Scrape.get(url) }
                // 2 connections × 150 no-wait events over 20 keyed instances, so both workers get some.
                let result = try await runCommand(Products.load, ["--endpoint", cluster.clients, "--metrics", url, "--json", "--mode", "ack",
                                                                  "--no-baseline", "--count", "150", "--machines", "20", "--window", "50"],
                                                  in: cluster.directory, timeout: .seconds(60))
                #expect(result.status == 0, "fsm-load exited \(result.status): \(result.stderr)")
                let report = try JSONDecoder().decode(Report.self, from: Data(result.stdout.utf8))
                let run = try #require(report.runs.first)
                #expect(run.sent == 300 && run.acknowledged == 300, "\(result.stdout)")

                // fsm-load's own scrape of the same endpoint: the topology's figures beside its count.
                let figures = try #require(run.topologyFigures, "\(result.stdout) \(result.stderr)")
                #expect(figures.routed == 300)
                #expect(figures.busy == 0 && figures.repliesDropped == 0)
                #expect(figures.workerEvents.values.reduce(0, +) == 300)
                #expect(Set(figures.workerEvents.keys) == ["data-1", "data-2"], "\(figures.workerEvents)")
                #expect(figures.transitions == 300)
                let p50 = try #require(figures.transitionMicros["p50"])
                let p99 = try #require(figures.transitionMicros["p99"])
                #expect(p50 > 0 && p50 <= p99)

                // The test's own scrape: fsm-load waited for the workers' heartbeats, so they are in.
                let after = try Scrape.get(url)
                let events = Self.difference(Self.byWorker("grove_worker_events_total", in: after),
                                             Self.byWorker("grove_worker_events_total", in: before))
                #expect(events.values.reduce(0, +) == 300)
                #expect(Set(events.keys) == ["data-1", "data-2"], "\(events)")
                #expect(events == figures.workerEvents.mapValues(Double.init))
                let counts = Self.difference(Self.byWorker(Self.transition + "_count", in: after),
                                             Self.byWorker(Self.transition + "_count", in: before))
                #expect(counts == events, "one transition per event, per worker")
                #expect(after.text.contains("# TYPE \(Self.transition) histogram\n"))
                // Each worker's series: cumulative buckets that never go down, +Inf equal to _count.
                for worker in ["data-1", "data-2"] {
                    let series = #"machine_type="Counter",worker="\#(worker)""#
                    let buckets = after.text.split(separator: "\n").filter { $0.hasPrefix("\(Self.transition)_bucket{\(series),le=") }
                        .compactMap { $0.split(separator: " ").last.flatMap { Double($0) } }
                    #expect(buckets.count == 22, "\(worker): \(buckets)")
                    #expect(zip(buckets, buckets.dropFirst()).allSatisfy { $0 <= $1 }, "\(worker): \(buckets)")
                    #expect(buckets.last == after.value("\(Self.transition)_count{\(series)}"))
                    #expect(after.value("\(Self.transition)_sum{\(series)}") > 0)
                }
                // The mailbox gauge, sampled at each heartbeat: drained once the load is over.
                _ = try await eventually("both workers' mailboxes drained in a scrape of \(url)") { () -> Bool? in
                    guard let scrape = try? Scrape.get(url) else { return nil }
                    let depths = Self.byWorker("grove_worker_mailbox_depth", in: scrape)
                    return Set(depths.keys) == ["data-1", "data-2"] && depths.values.allSatisfy { $0 == 0 } ? true : nil
                }
            }
        }

        /// Without --json, the figures are a line of the text report.
        @Test func theTextReportShowsTheTopologysFigures() async throws {
            try await withCluster(Self.topology) { cluster in
                let line = try #require(cluster.launch.stdout.split(separator: "\n").first { $0.hasPrefix("metrics ") })
                let url = String(line.dropFirst("metrics ".count))
                let result = try await runCommand(Products.load, ["--endpoint", cluster.clients, "--metrics", url, "--mode", "reply",
                                                                  "--no-baseline", "--count", "20", "--connections", "1", "--machines", "4"],
                                                  in: cluster.directory, timeout: .seconds(60))
                #expect(result.status == 0, "\(result.stderr)")
                #expect(result.stdout.contains("topology's own figures (reply): routed 20, replies 20, busy 0, reply-dropped 0; worker events "),
                        "\(result.stdout)")
                #expect(result.stdout.contains("; transitions 20, p50 "), "\(result.stdout)")
                // A URL nothing answers: told, and the run still reported.
                let missing = try await runCommand(Products.load, ["--endpoint", cluster.clients, "--metrics", "http://127.0.0.1:1/metrics",
                                                                   "--mode", "reply", "--no-baseline", "--count", "5", "--connections", "1",
                                                                   "--machines", "4"],
                                                   in: cluster.directory, timeout: .seconds(60))
                #expect(missing.status == 0, "\(missing.stderr)")
                #expect(missing.stderr.contains("fsm-load: no topology figures: metrics http://127.0.0.1:1/metrics: cannot connect"), "\(missing.stderr)")
                #expect(!missing.stdout.contains("topology's own figures"))
            }
        }

        static let ioTopology = TopologyFile(
            name: "metrics-io", transport: .ipc,
            workers: [.init(name: "edge"), .init(name: "data-io")],
            machines: [.init(name: "loader", type: "DataLoader", worker: "edge", durability: "state")],
            io: [("FetchItems", "data-io")],
            metrics: #"{ "listen": "127.0.0.1:0" }"#
        )

        /// A durable machine's io call on another worker: counted by request and outcome and
        /// timed where the machine made it; its worker's store commits timed and sized.
        @Test func ioCallsAndStoreCommitsAreCountedAndTimed() async throws {
            try await withCluster(Self.ioTopology) { cluster in
                let line = try #require(cluster.launch.stdout.split(separator: "\n").first { $0.hasPrefix("metrics ") })
                let url = String(line.dropFirst("metrics ".count))
                #expect(try await cluster.send("loader", "load") == loading)
                _ = try await eventually("loader's loaded state") { try await cluster.state("loader") == loadedDemoItems ? true : nil }
                let calls = #"grove_worker_io_calls_total{outcome="ok",request="FetchItems",worker="edge"}"#
                let scrape = try await eventually("the edge worker's io call in a scrape of \(url)") { () -> Scrape? in
                    guard let scrape = try? Scrape.get(url), scrape.value(calls) >= 1,
                          scrape.value(#"grove_worker_store_commit_seconds_count{worker="edge"}"#) >= 1 else { return nil }
                    return scrape
                }
                #expect(scrape.value(calls) == 1)
                #expect(scrape.value(#"grove_worker_io_call_seconds_count{request="FetchItems",worker="edge"}"#) == 1)
                #expect(scrape.value(#"grove_worker_io_call_seconds_bucket{request="FetchItems",worker="edge",le="+Inf"}"#) == 1)
                #expect(scrape.value(#"grove_worker_io_call_seconds_sum{request="FetchItems",worker="edge"}"#) > 0)
                let commits = scrape.value(#"grove_worker_store_commit_seconds_count{worker="edge"}"#)
                #expect(scrape.value(#"grove_worker_store_commit_writes_count{worker="edge"}"#) == commits)
                #expect(scrape.value(#"grove_worker_store_commit_writes_sum{worker="edge"}"#) >= commits, "a commit writes at least one record")
                #expect(scrape.text.contains("# TYPE grove_worker_io_calls_total counter"))
            }
        }
    }
}
