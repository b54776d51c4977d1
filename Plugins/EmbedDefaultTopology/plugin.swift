import Foundation
import PackagePlugin

/// Builds `Topologies/default.json` into GroveCluster as Swift source (`Topology.defaultJSON`),
/// so the file is the one source of the default topology and every executable carries it: no
/// resource bundle that must travel beside a copied binary (SwiftPM's `Bundle.module` traps
/// when it is missing).
@main
struct EmbedDefaultTopology: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let input = context.package.directoryURL.appending(path: "Topologies/default.json")
        let output = context.pluginWorkDirectoryURL.appending(path: "DefaultTopology.swift")
        return [.buildCommand(
            displayName: "Embedding Topologies/default.json",
            executable: try context.tool(named: "GroveEmbedTopology").url,
            arguments: [input.path(), output.path()],
            inputFiles: [input],
            outputFiles: [output]
        )]
    }
}
