"""What a ``tools/call`` becomes, for both eras: ``flow.py`` takes the parsed call and what
the caller can do and returns one outcome (created, answered, asks, held, streamed, handed
over, refused); each era only shapes it."""
