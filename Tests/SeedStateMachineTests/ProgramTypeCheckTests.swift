import Foundation
import Testing

/// A machine hosted by type needs transitions that do not await, and its type says so: a
/// `StateMachineProgram` whose transitions await is refused by the compiler, not by a trap when
/// its first host is made. Checked by type-checking two small programs against the Grove module
/// this test binary was built with: the same program compiles without the `await`, so the
/// refusal is the `await`'s, not the set-up's.
@Suite("Seed 003: a program hosted by type cannot await", .timeLimit(.minutes(1)))
struct ProgramTypeCheckTests {
    static func program(transition: String) -> String {
        """
        import Grove
        enum Light: StateMachineProgram {
            enum State: Codable, Sendable { case off, on }
            enum Event: Codable, Sendable { case toggle }
            static var stateMachine: SynchronousStateMachine<State, Event> {
                SynchronousStateMachine(initial: .off) { state, event in
                    \(transition)
                }
            }
        }
        """
    }

    @Test("a program whose transitions await does not compile; without the await it does")
    func awaitingTransitionsDoNotCompile() async throws {
        let synchronous = try await typeCheck(Self.program(transition: "return .newState(state == .off ? .on : .off)"))
        #expect(synchronous.status == 0, "the synchronous program should compile: \(synchronous.output)")

        let awaiting = try await typeCheck(Self.program(transition: "await Task.yield()\n return .newState(.on)"))
        #expect(awaiting.status != 0, "a program whose transitions await compiled")
        #expect(awaiting.output.contains("synchronous"), "\(awaiting.output)")
    }

    /// Runs `swiftc -typecheck` on `source` with the modules beside this test binary.
    func typeCheck(_ source: String) async throws -> (status: Int32, output: String) {
        let binary = URL(fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
        let modules = binary.deletingLastPathComponent().appendingPathComponent("Modules")
        try #require(FileManager.default.fileExists(atPath: modules.appendingPathComponent("Grove.swiftmodule").path),
                     "no Grove module beside the test binary, in \(modules.path)")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("grove-typecheck-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("Program.swift")
        try source.write(to: file, atomically: true, encoding: .utf8)
        let output = directory.appendingPathComponent("output.txt")
        FileManager.default.createFile(atPath: output.path, contents: nil)
        let handle = try FileHandle(forWritingTo: output)
        defer { try? handle.close() }

        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["swiftc", "-typecheck", "-I", modules.path, file.path]
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let deadline = ContinuousClock.now + .seconds(50)
        while process.isRunning, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        if process.isRunning {
            process.terminate()
            Issue.record("swiftc -typecheck did not finish within 50 s")
        }
        process.waitUntilExit()
        return (process.terminationStatus, (try? String(contentsOf: output, encoding: .utf8)) ?? "")
    }
}
