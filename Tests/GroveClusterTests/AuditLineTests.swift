import Foundation
@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import Grove
import GroveRuntime
import GroveTesting
import GroveWire
import Testing

/// A machine with secrets in its events and its state, to audit.
enum SecretMachine: Machine {
    enum Event: Codable, Sendable, Equatable, Redacting {
        case type(String)
        case clear
        var redacted: Self {
            switch self {
            case .type: .type(Redaction.placeholder)
            case .clear: .clear
            }
        }
    }
    struct State: Codable, Sendable, Equatable, Redacting {
        var secret = ""
        var redacted: Self { State(secret: secret.isEmpty ? "" : Redaction.placeholder) }
    }
    static var initialState: State { State() }
    static func update(_ state: inout State, event: Event) -> Effect {
        switch event {
        case .type(let text): state.secret += text
        case .clear: guard !state.secret.isEmpty else { return .unhandled }
            state.secret = ""
        }
        return .none
    }
}

/// The audit log's pieces: a line's exact bytes, the digest, the file, and the trail that turns
/// an instance's trace into lines.
@Suite("Audit lines", .timeLimit(.minutes(2)))
struct AuditLineTests {
    static func temporaryDirectory() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("grove-audit-\(UUID().uuidString)").path
    }

    static func lines(of path: String) throws -> [[String: Any]] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        return try text.split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
    }

    @Test func theDigestIsSHA256InLowercaseHex() {
        #expect(AuditDigest.of(Array("abc".utf8)) == "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(AuditDigest.of(state: TallyMachine.State(count: 1))
            == "sha256:6aea6dfe6561984cdc5c54ead84d47d2cf29e48253ae282aef237404adad4661") // of {"count":1}
    }

    @Test func aLineIsOneJSONObjectWithItsKeysInOrder() {
        let line = AuditLine(time: "2026-11-26T06:01:02.123Z", worker: "main-0", address: "a/\"quoted\"", origin: "timer tick",
                             event: Array(#"{"increment":{}}"#.utf8), before: "sha256:00", after: "sha256:11")
        #expect(String(decoding: line.bytes, as: UTF8.self) == #"""
            {"time":"2026-11-26T06:01:02.123Z","worker":"main-0","address":"a/\"quoted\"","origin":"timer tick","event":{"increment":{}},"before":"sha256:00","after":"sha256:11"}

            """#)
        var withState = line
        withState.state = Array(#"{"count":1}"#.utf8)
        #expect(String(decoding: withState.bytes, as: UTF8.self).hasSuffix(#","after":"sha256:11","state":{"count":1}}"# + "\n"))
    }

    @Test func theTimeIsUTCWithMilliseconds() {
        #expect(AuditTime.format(Date(timeIntervalSince1970: 1_795_672_862.5)) == "2026-11-26T06:01:02.500Z")
        #expect(AuditTime.format(Timestamp(sinceEpoch: .milliseconds(1_795_672_862_123))) == "2026-11-26T06:01:02.123Z")
        #expect(AuditTime.format(Timestamp(sinceEpoch: .milliseconds(1_795_672_862_007))) == "2026-11-26T06:01:02.007Z")
    }

    @Test func theTrailChainsDigestsAndRedactsEventsAndStates() async throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let sink = AuditSink()
        sink.use(directory: directory)
        try sink.adopt(AuditPlacement(machines: ["secret"], states: true), worker: "w-0")
        #expect(sink.carriesStates(forAddress: "secret") == true)
        #expect(sink.carriesStates(forAddress: "other") == nil)
        // The worker's wall clock stamps the lines: a test's fixes their time.
        let clock = TestClock(now: Timestamp(sinceEpoch: .milliseconds(1_795_672_862_123)))
        let trail = AuditTrail<SecretMachine>(address: "secret", worker: "w-0", sink: sink, carriesStates: true, clock: clock, initial: State())
        trail.record(.processed(event: .type("hunter2"), origin: .sent, state: State(secret: "hunter2")))
        trail.record(.unhandled(event: .clear, origin: .inline, state: State(secret: "hunter2")))
        await clock.advance(by: .seconds(1))
        trail.record(.processed(event: .clear, origin: .timer("t"), state: State()))
        #expect(try Self.lines(of: "\(directory)/w-0.jsonl").isEmpty, "lines wait for the end of the turn")
        try sink.writePending()

        let text = try String(contentsOfFile: "\(directory)/w-0.jsonl", encoding: .utf8)
        #expect(!text.contains("hunter2"), "a secret reached the audit log: \(text)")
        let lines = try Self.lines(of: "\(directory)/w-0.jsonl")
        try #require(lines.count == 2, "one line per committed transition, none for the unhandled event: \(text)")
        let empty = AuditDigest.of(state: State()), typed = AuditDigest.of(state: State(secret: "hunter2"))
        #expect(typed != AuditDigest.of(state: State(secret: "hunter3")), "the digest is of the full state, secret included")
        #expect(lines[0]["address"] as? String == "secret" && lines[0]["worker"] as? String == "w-0")
        #expect(lines[0]["time"] as? String == "2026-11-26T06:01:02.123Z" && lines[1]["time"] as? String == "2026-11-26T06:01:03.123Z",
                "\(text)")
        #expect(lines[0]["origin"] as? String == "sent" && lines[1]["origin"] as? String == "timer t")
        #expect(lines[0]["before"] as? String == empty && lines[0]["after"] as? String == typed)
        #expect(lines[1]["before"] as? String == typed && lines[1]["after"] as? String == empty)
        #expect((lines[0]["event"] as? [String: Any]).map(Self.json) == #"{"type":{"_0":"<redacted>"}}"#)
        #expect((lines[0]["state"] as? [String: Any]).map(Self.json) == #"{"secret":"<redacted>"}"#)
        #expect((lines[1]["event"] as? [String: Any]).map(Self.json) == #"{"clear":{}}"#)
    }

    @Test func linesAreAppendedAcrossRunsAndTheFileIsPrivate() throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for _ in 0 ..< 2 {
            let log = try AuditLog(directory: directory, worker: "w", sync: true)
            try log.append(Array("{}\n".utf8))
        }
        #expect(try String(contentsOfFile: "\(directory)/w.jsonl", encoding: .utf8) == "{}\n{}\n")
        let attributes = try FileManager.default.attributesOfItem(atPath: "\(directory)/w.jsonl")
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
    }

    @Test func aWorkerWithoutAnAuditDirectoryIsTold() {
        let sink = AuditSink()
        #expect(throws: AuditLogError(.cannotOpen, path: "", "")) {
            try sink.adopt(AuditPlacement(machines: ["a"]), worker: "w")
        }
        #expect(throws: Never.self) { try sink.adopt(nil, worker: "w") }
    }

    typealias State = SecretMachine.State

    static func json(_ object: [String: Any]) -> String {
        String(decoding: (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data(),
               as: UTF8.self)
    }
}
