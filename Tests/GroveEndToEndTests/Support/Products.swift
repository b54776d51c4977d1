import Foundation

/// Where the built executables are: the directory of the running test binary (SwiftPM puts the
/// test bundle next to the products), else `<repo>/.build/debug`.
enum Products {
    static let directory: URL = {
        let names = ["fsm-launch", "fsm-send", "fsm-worker", "fsm-load", "fsm-keys"]
        func complete(_ directory: URL) -> Bool {
            names.allSatisfy { FileManager.default.isExecutableFile(atPath: directory.appendingPathComponent($0).path) }
        }
        var candidates: [URL] = []
        if let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            var directory = URL(fileURLWithPath: exe).deletingLastPathComponent()
            // An .xctest bundle directory, should the binary live inside one.
            for _ in 0..<3 {
                candidates.append(directory)
                directory = directory.deletingLastPathComponent()
            }
        }
        let repo = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        candidates.append(repo.appendingPathComponent(".build/debug"))
        guard let found = candidates.first(where: complete) else {
            fatalError("fsm-launch, fsm-send, fsm-worker, fsm-load and fsm-keys not found in \(candidates.map(\.path)); build with `swift build --build-tests`")
        }
        return found
    }()

    static var launch: URL { directory.appendingPathComponent("fsm-launch") }
    static var send: URL { directory.appendingPathComponent("fsm-send") }
    static var worker: URL { directory.appendingPathComponent("fsm-worker") }
    static var load: URL { directory.appendingPathComponent("fsm-load") }
    static var keys: URL { directory.appendingPathComponent("fsm-keys") }
}
