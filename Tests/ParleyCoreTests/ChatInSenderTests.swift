import ParleyCore
import Testing

/// Who sent a `chat-in` message: what the broker vouches for, never the payload.
struct ChatInSenderTests {
    func input(stamped: String?) -> ChatInput { ChatInput(topic: "chat-in/x", payload: [], sender: stamped) }

    @Test func thePluginsStampIsTheSenderAndATopicMayOnlyNameThatOne() {
        let plugin = ChatInSender.plugin
        #expect(plugin.sender(of: input(stamped: "7"), topicSender: nil) == .sender(7))
        #expect(plugin.sender(of: input(stamped: "7"), topicSender: 7) == .sender(7))
        #expect(plugin.sender(of: input(stamped: "7"), topicSender: 8) == .mismatched(7))
        #expect(plugin.sender(of: input(stamped: nil), topicSender: 7) == .unknown)
        #expect(plugin.sender(of: input(stamped: "seven"), topicSender: nil) == .unknown)
    }

    @Test func withoutThePluginTheTopicsUserIsTheSenderAndAStampIsIgnored() {
        let topic = ChatInSender.topic
        #expect(topic.sender(of: input(stamped: nil), topicSender: 7) == .sender(7))
        #expect(topic.sender(of: input(stamped: "8"), topicSender: 7) == .sender(7))
        #expect(topic.sender(of: input(stamped: "8"), topicSender: nil) == .unknown)
    }
}
