extension Settings {
    /// How long after sending a message may be edited; zero: always.
    func messageEditWindow() throws -> Duration {
        try seconds(SettingKeys.Messages.editWindow) ?? .zero
    }
}
