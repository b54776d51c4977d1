import Foundation
import Testing

/// Launches `topology` and runs `before` on it, kills its fsm-launch with SIGKILL and waits for
/// its workers to exit (what a crash of the launcher leaves), runs `between` on the directory
/// (nothing runs in it then), then launches `relaunched` (the same topology unless given) over
/// the same directory and runs `after` on it with what `before` returned. Both clusters are torn down whatever happens; the directory is removed
/// when everything passed.
func withKilledAndRelaunchedCluster<T>(
    _ topology: TopologyFile,
    relaunchedAs relaunched: TopologyFile? = nil,
    sourceLocation: SourceLocation = #_sourceLocation,
    before: (Cluster) async throws -> T,
    between: (URL) async throws -> Void = { _ in },
    after: (Cluster, T) async throws -> Void
) async throws {
    let first = try await Cluster.start(topology)
    let workers = ProcessTable.children(of: first.launch.pid)
    let kept: T
    do {
        kept = try await before(first)
        kill(first.launch.pid, SIGKILL)
        try await waitUntil("the workers of the killed fsm-launch to exit", timeout: .seconds(20)) {
            workers.allSatisfy { !ProcessTable.isAlive($0) }
        }
        try await between(first.directory)
    } catch {
        for problem in await first.shutdown() { Issue.record(Comment(rawValue: problem), sourceLocation: sourceLocation) }
        first.removeDirectory()
        throw error
    }
    let second = try await Cluster.start(relaunched ?? topology, in: first.directory)
    do {
        try await after(second, kept)
    } catch {
        Issue.record(Comment(rawValue: "fsm-launch stderr:\n" + second.log.split(separator: "\n").suffix(40).joined(separator: "\n")),
                     sourceLocation: sourceLocation)
        for problem in await second.shutdown() { Issue.record(Comment(rawValue: problem), sourceLocation: sourceLocation) }
        throw error
    }
    for problem in await second.shutdown() { Issue.record(Comment(rawValue: problem), sourceLocation: sourceLocation) }
    second.removeDirectory()
}
