import Foundation
@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import Testing

/// A process that committed and was killed with SIGKILL leaves every commit it was told about
/// readable, and none half-written. The process is this test binary run again with
/// `GROVE_STORE_CRASH_CHILD` set, running only ``childCommitsUntilKilled()``: a real process with
/// the real store, which SIGKILL ends wherever it is (often in the middle of a commit).
@Suite(.timeLimit(.minutes(2))) struct StoreCrashTests {
    static let variable = "GROVE_STORE_CRASH_CHILD"
    static var childDirectory: String? { ProcessInfo.processInfo.environment[variable] }

    @Test func everyCommitOfAProcessKilledWithSIGKILLIsReadableAndWhole() async throws {
        let directory = try StoreFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let progress = directory.appendingPathComponent("progress")
        let child = try Self.startChild(in: directory)
        defer { if child.isRunning { kill(child.processIdentifier, SIGKILL) } }

        // Let it commit a few hundred times, then kill it without warning.
        let deadline = ContinuousClock.now + .seconds(60)
        while Self.committed(progress) < 300 {
            guard child.isRunning else {
                Issue.record("the child exited (\(child.terminationStatus)) before it was killed; see \(directory.path)/child.out")
                return
            }
            guard ContinuousClock.now < deadline else {
                Issue.record("the child committed only \(Self.committed(progress)) times within 60 s")
                return
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        kill(child.processIdentifier, SIGKILL)
        // Its own deadline: the commits above may have used most of theirs on a loaded machine,
        // and reading why a running process ended traps.
        let reaped = ContinuousClock.now + .seconds(30)
        while child.isRunning, ContinuousClock.now < reaped { try await Task.sleep(for: .milliseconds(10)) }
        try #require(!child.isRunning, "the child was still running 30 s after SIGKILL")
        #expect(child.terminationReason == .uncaughtSignal && child.terminationStatus == SIGKILL)
        let told = Self.committed(progress)

        // The lock died with the process; what it committed is all there, each commit whole.
        let store = try SQLiteMachineStore.open(directory: directory.path, worker: "child")
        defer { store.close() }
        let records = try store.records()
        let counter = try #require(records.first { $0.address == "counter" })
        let last = try #require(UInt64(String(decoding: counter.snapshot, as: UTF8.self)))
        #expect(last >= UInt64(told), "the child was told \(told) commits lasted, the store has \(last)")
        #expect(counter.sequence == (last > 10 ? last - 10 : 0))
        let instances = records.filter { $0.address.hasPrefix("m/") }
        #expect(instances.count == Int(last), "one instance per commit, and none of a commit not made")
        #expect(Set(instances.map(\.address)) == Set((1...last).map { "m/\($0)" }))
        #expect(instances.allSatisfy { $0.snapshot == Array($0.address.dropFirst(2).utf8) })
        let journal = try store.journal(of: "counter", after: counter.sequence)
        #expect(journal.map(\.sequence) == Array((last > 10 ? last - 9 : 1)...last))
    }

    /// The child's side; skipped unless the test above started this process.
    @Test(.enabled(if: Self.childDirectory != nil, "run only as the child that the crash test starts"))
    func childCommitsUntilKilled() throws {
        let directory = try #require(Self.childDirectory)
        let store = try SQLiteMachineStore.open(directory: directory, worker: "child")
        let progress = open(directory + "/progress", O_WRONLY | O_CREAT | O_APPEND, 0o600)
        try #require(progress >= 0)
        // Bounded: should the parent die without killing it, the child ends on its own.
        let deadline = ContinuousClock.now + .seconds(90)
        var sequence: UInt64 = 0
        while ContinuousClock.now < deadline, sequence < 1_000_000 {
            sequence += 1
            var commit = StoreCommit()
            commit.records = [
                // The record covers all but the last ten events; the journal holds those.
                MachineRecord(address: "counter", type: "Counter", snapshot: Array("\(sequence)".utf8),
                              sequence: sequence > 10 ? sequence - 10 : 0),
                MachineRecord(address: "m/\(sequence)", type: "Counter", snapshot: Array("\(sequence)".utf8)),
            ]
            commit.journal = [JournalEntry(address: "counter", sequence: sequence, event: Array("add".utf8), time: 0)]
            if sequence > 10 { commit.truncations = [(address: "counter", through: sequence - 10)] }
            try store.commit(commit)
            let line = Array("\(sequence)\n".utf8)
            _ = line.withUnsafeBytes { write(progress, $0.baseAddress, $0.count) }
        }
        close(progress)
        store.close()
    }

    /// How many commits the child has reported as returned: its whole lines.
    static func committed(_ progress: URL) -> Int {
        guard let text = try? String(contentsOf: progress, encoding: .utf8) else { return 0 }
        return text.split(separator: "\n", omittingEmptySubsequences: true).count - (text.hasSuffix("\n") || text.isEmpty ? 0 : 1)
    }

    /// This test binary again, running only the child's test.
    static func startChild(in directory: URL) throws -> Process {
        let binary = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["--testing-library", "swift-testing", "--filter", "StoreCrashTests/childCommitsUntilKilled"]
        var environment = ProcessInfo.processInfo.environment
        environment[variable] = directory.path
        process.environment = environment
        let output = directory.appendingPathComponent("child.out")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        let handle = try FileHandle(forWritingTo: output)
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        try process.run()
        try? handle.close()
        return process
    }
}
