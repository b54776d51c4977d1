import Foundation

/// Runs a Python peer of the tests' own (``RoguePeer``, ``CaseClaimer``): writes `script` into
/// the cluster's directory as `fileName`, passes it `configuration` as one JSON argument, and
/// decodes the last line it prints as its report. `what` names it when it fails.
func runPythonPeer<Report: Decodable>(_ script: String, as fileName: String, configuration: some Encodable, in cluster: Cluster,
                                      what: String) async throws -> Report {
    let file = cluster.directory.appendingPathComponent(fileName)
    try script.write(to: file, atomically: true, encoding: .utf8)
    let argument = String(decoding: try JSONEncoder().encode(configuration), as: UTF8.self)
    let result = try await runCommand(URL(fileURLWithPath: "/usr/bin/env"), ["python3", file.path, argument], in: cluster.directory,
                                      timeout: .seconds(60))
    guard result.status == 0, let line = result.stdout.split(separator: "\n").last else {
        throw HarnessError("\(what) failed: \(result)")
    }
    return try JSONDecoder().decode(Report.self, from: Data(line.utf8))
}

/// Starts a fake coordinator of the test's own: writes `script` into `directory` as
/// `coordinator.py`, runs it with the endpoint `ipc://<directory>/clients` as its argument, and
/// waits (bounded) until it prints `bound`. The caller stops it.
func startFakeCoordinator(_ script: String, in directory: URL) async throws -> (process: ChildProcess, endpoint: String) {
    let endpoint = "ipc://\(directory.path)/clients"
    let file = directory.appendingPathComponent("coordinator.py")
    try script.write(to: file, atomically: true, encoding: .utf8)
    let fake = try await ChildProcess(URL(fileURLWithPath: "/usr/bin/env"), ["python3", file.path, endpoint], outputIn: directory,
                                      label: "coordinator.py")
    do {
        try await waitUntil("the test's coordinator to bind \(endpoint): \(fake.stderr)") {
            guard fake.isRunning else { throw HarnessError("the test's coordinator ended: \(fake.stderr)") }
            return fake.stdout.contains("bound")
        }
    } catch {
        _ = fake.stop()
        throw error
    }
    return (fake, endpoint)
}
