import Foundation
import Testing

/// Runs `swiftc -typecheck` on `source` with the modules beside this test binary (`Grove` and
/// the other modules the running test target was built with), for tests that show a program is
/// refused by the compiler. Waits up to 50 s for swiftc; records an issue if it takes longer.
/// The program is its own module outside this package, as a user's is: `package` declarations
/// are out of its sight.
/// - Parameters:
///   - source: The program.
///   - arguments: More for swiftc, e.g. `-load-plugin-executable` for a macro.
/// - Returns: swiftc's exit status and everything it printed.
/// - Throws: When the source cannot be written or swiftc cannot be started.
package func typeCheck(_ source: String, arguments: [String] = []) async throws -> (status: Int32, output: String) {
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
    _ = FileManager.default.createFile(atPath: output.path, contents: nil)
    let handle = try FileHandle(forWritingTo: output)
    defer { try? handle.close() }

    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["swiftc", "-typecheck", "-I", modules.path] + arguments + [file.path]
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
