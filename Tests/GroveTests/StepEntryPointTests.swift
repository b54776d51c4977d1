import Foundation
import Testing

/// Hosts, journal replay and fsm-check run a machine through `Machine.step`, the one entry
/// point its model (state timeouts, and what comes after) is added in; one that called
/// `update` directly would run a machine without it. Read from the sources.
@Suite("One entry point", .timeLimit(.minutes(2)))
struct StepEntryPointTests {
    /// The modules that run machines they are handed.
    static let runners = ["GroveRuntime", "GroveWorker", "GroveCheck", "GroveTesting", "GroveTea", "GroveCluster", "GroveCoordinator"]

    @Test func runnersCallStepNotUpdate() throws {
        let sources = PublicSurfaceTests.root.appendingPathComponent("Sources")
        var found: [String] = []
        for module in Self.runners {
            let folder = sources.appendingPathComponent(module)
            let files = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)?
                .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" } ?? []
            for file in files {
                let text = try String(contentsOf: file, encoding: .utf8)
                for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
                where line.contains("M.update(&") {
                    found.append("\(module)/\(file.lastPathComponent):\(number + 1)")
                }
            }
        }
        #expect(found.isEmpty, "these run a machine's update directly; call M.step(&state, event:) so the machine's model applies: \(found)")
    }
}
