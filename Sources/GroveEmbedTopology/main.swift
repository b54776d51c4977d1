import Foundation

// Writes Topologies/default.json as `Topology.defaultJSON` (the EmbedDefaultTopology plugin
// runs it at build time): arguments are the JSON file and the Swift file to write.
let arguments = CommandLine.arguments.dropFirst()
guard arguments.count == 2, let input = arguments.first, let output = arguments.last else {
    FileHandle.standardError.write(Data("usage: GroveEmbedTopology DEFAULT.json OUTPUT.swift\n".utf8))
    exit(64)
}
let text: String
do {
    text = try String(contentsOfFile: input, encoding: .utf8)
} catch {
    FileHandle.standardError.write(Data("error: cannot read the default topology \(input): \(error)\n".utf8))
    exit(66)
}
// A raw string whose delimiter the text cannot close.
var hashes = "#"
while text.contains("\"" + hashes) { hashes += "#" }
let source = """
    // Generated at build time from Topologies/default.json by the EmbedDefaultTopology plugin.
    // Edit the JSON file, not this.
    extension Topology {
        /// The text of `Topologies/default.json`, built in.
        static let defaultJSON = \(hashes)\"\"\"
    \(text.split(separator: "\n", omittingEmptySubsequences: false).map { $0.isEmpty ? "" : "    " + $0 }.joined(separator: "\n"))
        \"\"\"\(hashes)
    }

    """
do {
    try source.write(toFile: output, atomically: true, encoding: .utf8)
} catch {
    FileHandle.standardError.write(Data("error: cannot write \(output): \(error)\n".utf8))
    exit(73)
}
