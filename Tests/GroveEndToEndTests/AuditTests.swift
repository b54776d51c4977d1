import Foundation
import GroveWire
import Testing

extension EndToEnd {
    /// Issue 23, item 5: every committed transition of an audited machine is a JSON line in its
    /// worker's audit log, written before the reply leaves, with secrets redacted.
    @Suite(.timeLimit(.minutes(2)))
    struct AuditTests {
        static let topology = TopologyFile(
            name: "audited", transport: .tcp,
            workers: [.init(name: "edge"), .init(name: "auth-io")],
            machines: [.init(name: "auth", type: "AuthFlow", worker: "edge", keyed: true, audit: true),
                       .init(name: "tally", type: "Counter", worker: "edge", keyed: true, durability: "state", audit: true),
                       .init(name: "quiet", type: "Counter", worker: "edge", keyed: true)],
            io: [("Authenticate", "auth-io"), ("VerifyTwoFactor", "auth-io")],
            audit: #"{ "directory": "audit", "states": true }"#
        )

        static let password = "compiler"

        /// The log's lines, each parsed.
        static func lines(_ cluster: Cluster) throws -> [JSONValue] {
            let text = try String(contentsOf: cluster.directory.appendingPathComponent("audit/edge.jsonl"), encoding: .utf8)
            return try text.split(separator: "\n").map { try JSONValue(parsing: Data($0.utf8)) }
        }

        @Test func everyCommittedTransitionIsALineWithSecretsRedacted() async throws {
            try await withCluster(Self.topology) { cluster in
                let check = try await runCommand(Products.launch, ["--check", cluster.directory.appendingPathComponent("topology.json").path],
                                                 in: cluster.directory)
                let folder = cluster.directory.appendingPathComponent("audit").standardizedFileURL.path
                #expect(check.stdout.contains("audit: auth, tally; lines in \(folder)/<worker>.jsonl; with states (redacted); flush process\n"),
                        "\(check)")

                #expect(try await cluster.send("tally/a", "increment") == json(#"{"count":1}"#))
                #expect(try await cluster.send("tally/a", #"{"add":{"_0":41}}"#) == json(#"{"count":42}"#))
                try await cluster.send("quiet/a", "increment")
                // Written before the reply left: no wait needed.
                let written = try Self.lines(cluster)
                let tally = written.filter { $0["address"] == .string("tally/a") }
                try #require(tally.count == 2, "\(written)")
                #expect(tally.map { $0["event"] } == [json(#"{"increment":{}}"#), json(#"{"add":{"_0":41}}"#)])
                #expect(tally.map { $0["state"] } == [json(#"{"count":1}"#), json(#"{"count":42}"#)])
                #expect(tally.allSatisfy { $0["worker"] == .string("edge") && $0["origin"] == .string("sent") })
                #expect(tally.allSatisfy { $0["time"]?.stringValue?.hasSuffix("Z") == true })
                for line in tally {
                    #expect(line["before"] != line["after"], "\(line)")
                    #expect(line["after"]?.stringValue?.hasPrefix("sha256:") == true && line["after"]?.stringValue?.count == 71, "\(line)")
                }
                #expect(tally[1]["before"] == tally[0]["after"], "each line starts from the state the one before committed")

                try await cluster.send("auth/g", "startLogin")
                try await cluster.send("auth/g", #"{"updateEmail":{"_0":"grace@example.com"}}"#)
                try await cluster.send("auth/g", #"{"updatePassword":{"_0":"\#(Self.password)"}}"#)
                let auth = try Self.lines(cluster).filter { $0["address"] == .string("auth/g") }
                try #require(auth.count == 3, "\(auth)")
                #expect(auth[2]["event"] == json(#"{"updatePassword":{"_0":"<redacted>"}}"#), "\(auth[2])")
                #expect(auth[2]["state"]?["step"]?["enteringCredentials"]?["password"] == .string("<redacted>"), "\(auth[2])")
                #expect(auth[2]["state"]?["step"]?["enteringCredentials"]?["email"] == .string("grace@example.com"))
                #expect(auth[2]["before"] != auth[2]["after"], "the digest is of the full state, password included")

                let all = try Self.lines(cluster)
                #expect(!all.contains { $0["address"] == .string("quiet/a") || $0["address"] == .string("probe") }, "not audited: \(all)")
                let text = try String(contentsOf: cluster.directory.appendingPathComponent("audit/edge.jsonl"), encoding: .utf8)
                #expect(!text.contains(Self.password), "the password reached the audit log:\n\(text)")
                #expect(!FileManager.default.fileExists(atPath: cluster.directory.appendingPathComponent("audit/auth-io.jsonl").path),
                        "a worker with no audited machine opens no log")
            }
        }
    }
}
