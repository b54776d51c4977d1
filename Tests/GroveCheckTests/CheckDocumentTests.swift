import Foundation
import GroveCheck
import Testing

/// docs/CHECK.md shows what fsm-check finds for every shipped example and draws LoginFlow,
/// AuthFlow, BufferedConnection and AuthFlowChart (nested); these tests hold the document to what the walk generates today.
@Suite("docs/CHECK.md", .timeLimit(.minutes(2)))
struct CheckDocumentTests {
    static let document: String = {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return (try? String(contentsOf: root.appendingPathComponent("docs/CHECK.md"), encoding: .utf8)) ?? ""
    }()

    /// The document's table row for `graph`, built from the walk's findings.
    static func row(_ graph: StateGraph) -> String {
        let declared = graph.reachable.count + graph.unreachable.count
        let depth = graph.maxDepth.map { ", \($0) events deep" } ?? ""
        var other: [String] = []
        if graph.terminal.isEmpty { other.append("no terminal state (runs until stopped)") }
        if !graph.nondeterministic.isEmpty { other.append("\(graph.nondeterministic.count) nondeterministic") }
        if !graph.unreachable.isEmpty { other.append("\(graph.unreachable.count) unreachable") }
        if !graph.fallsThrough.isEmpty { other.append("\(graph.fallsThrough.count) fall through") }
        if !graph.cannotEnd.isEmpty { other.append("\(graph.cannotEnd.count) cannot end") }
        if !graph.leavesTerminal.isEmpty { other.append("\(graph.leavesTerminal.count) handled in a terminal state") }
        if !graph.timerNotArmed.isEmpty { other.append("\(graph.timerNotArmed.count) timer events not armed") }
        return "| `\(graph.machine)` | \(graph.reachable.count) of \(declared) state cases\(depth) | \(graph.unhandled.count) | "
            + (other.isEmpty ? "none" : other.joined(separator: "; ")) + " |"
    }

    @Test("the findings table has one row per shipped example, and no other")
    func tableNamesEveryExample() throws {
        try #require(!Self.document.isEmpty, "docs/CHECK.md not found beside the tests")
        let rows = Self.document.split(separator: "\n").filter { $0.hasPrefix("| `") }
        let names = rows.compactMap { $0.split(separator: "`").dropFirst().first.map(String.init) }
        #expect(names == ShippedExamples.names)
    }

    @Test("each example's row says what the walk finds", arguments: ShippedExamples.names)
    func findingsRow(name: String) async throws {
        let explore = try #require(ShippedExamples.graphs[name])
        let row = Self.row(await explore())
        #expect(Self.document.contains("\n\(row)\n"), "docs/CHECK.md should have the row \(row)")
    }

    @Test("the Mermaid graphs of LoginFlow, AuthFlow, BufferedConnection and AuthFlowChart are the generator's",
          arguments: ["LoginFlow", "AuthFlow", "BufferedConnection", "AuthFlowChart"])
    func mermaidIsGenerated(name: String) async throws {
        let explore = try #require(ShippedExamples.graphs[name])
        let graph = await explore().mermaid
        #expect(Self.document.contains("## \(name)\n"))
        #expect(Self.document.contains("```mermaid\n\(graph)```\n"), "docs/CHECK.md's \(name) graph differs from:\n\(graph)")
    }
}
