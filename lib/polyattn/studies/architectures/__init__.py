"""Chapter 10 (``chapters/10_architectures``): ViT, DeiT, Swin and XCiT through timm, and what N is
under windows and channels."""
