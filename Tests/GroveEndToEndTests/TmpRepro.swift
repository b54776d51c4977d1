import Testing

struct ReproItem: CustomStringConvertible { var topic: String; var description: String { topic } }
final class ReproBox: Sendable {
    var items: [ReproItem] { [ReproItem(topic: "effect:poller/b"), ReproItem(topic: "state:poller/b")] }
    func items(after mark: Int) -> [ReproItem] { Array(items.dropFirst(mark)) }
}

@Suite struct TmpRepro {
    @Test func repro() async throws {
        let box = ReproBox()
        let a = box.items(after: 0).filter { $0.topic.hasSuffix(":poller/a") }
        let b = box.items(after: 0).filter { $0.topic.hasSuffix(":poller/a") }
        print("REPRO1", a.count, b.count)
        #expect(a.isEmpty, "x: \(a)")
    }
    @Test func repro2() async throws {
        let box = ReproBox()
        let a = box.items(after: 0).filter { $0.topic.hasSuffix(":poller/a") }
        print("REPRO2", a.count)
    }
}
