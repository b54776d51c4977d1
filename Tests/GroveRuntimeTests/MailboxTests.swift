import Testing
import Grove
@testable import GroveRuntime

@Suite("Mailbox", .timeLimit(.minutes(2)))
struct MailboxTests {
    @Test("Scenario 5: events taken for processing still count against the capacity until processed")
    func capacityCoversEventsBeingProcessed() throws {
        let mailbox = Mailbox<Probe>(capacity: 2)
        try mailbox.enqueueExternal(.event(.note("a")), address: "probe")
        try mailbox.enqueueExternal(.event(.note("b")), address: "probe")
        #expect(mailbox.take(processed: 0).count == 2)
        let error = #expect(throws: HostError.self) { try mailbox.enqueueExternal(.event(.note("c")), address: "probe") }
        #expect(error?.code == .mailboxFull)
        #expect(mailbox.take(processed: 2).isEmpty)  // nothing queued: frees the capacity only
        try mailbox.enqueueExternal(.event(.note("c")), address: "probe")
        #expect(mailbox.take(processed: 0).count == 1)
    }

    @Test("Reports from running work are never refused for capacity")
    func reportsBypassCapacity() throws {
        let mailbox = Mailbox<Probe>(capacity: 1)
        try mailbox.enqueueExternal(.event(.note("a")), address: "probe")
        try mailbox.post(.finished(JobKey(id: "w", token: 1)))
        #expect(mailbox.take(processed: 0).count == 2)
    }
}
