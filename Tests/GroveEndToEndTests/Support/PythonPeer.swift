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
