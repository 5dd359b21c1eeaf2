extension Duration {
    /// The whole milliseconds of the duration (what is stored and shown as `…Ms`).
    public var milliseconds: Int64 {
        components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000
    }
}
