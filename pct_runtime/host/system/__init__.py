"""The operating system's side: process identity, the lifeline that takes work down with
the server, socket peers, folders reached without links, platform facts, the sandbox."""
