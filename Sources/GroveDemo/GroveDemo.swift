import ArgumentParser

@main
struct GroveDemo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "grove-demo",
        abstract: "Drives Grove's example machines locally and prints every transition.",
        discussion: """
            Each line is one transition: the machine, where the event came from (sent, inline, \
            an effect id, a timer id), the event, and the state it committed.
            """
    )

    @Option(name: .customLong("only"), help: "Run only these scenes (repeatable). See --list.")
    var only: [String] = []

    @Flag(help: "List the scenes and exit.")
    var list = false

    func validate() throws {
        let known = Set(Scene.all.map(\.name))
        for name in only where !known.contains(name) {
            throw ValidationError("unknown scene '\(name)'; choose from \(Scene.all.map(\.name).joined(separator: ", "))")
        }
    }

    func run() async throws {
        if list {
            for scene in Scene.all { print("\(scene.name): \(scene.summary)") }
            return
        }
        for scene in Scene.all where only.isEmpty || only.contains(scene.name) {
            TransitionPrinter.heading(scene.summary)
            try await scene.run()
        }
    }
}
