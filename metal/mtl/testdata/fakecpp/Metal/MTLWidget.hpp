// A made-up header in metal-cpp's shape, written for mltop's tests: it
// declares one class with a few selectors so that the header check can be
// shown to catch misspelled selectors, wrong argument counts and wrong
// kinds without Apple's files.
#pragma once

namespace MTL
{
_MTL_ENUM(NS::UInteger, WidgetMode) {
    WidgetModeSlow = 0,
    WidgetModeFast = 1,
};

using Tick = std::uint64_t;

class Widget : public NS::Referencing<Widget>
{
public:
    static class Widget* widget();
    void                 spinWithCount(NS::UInteger count, MTL::WidgetMode mode, NS::Error** error);
    double               elapsed() const;
    void                 readTicks(MTL::Tick* ticks);
};

}

_MTL_PRIVATE_DEF_SEL(widget,
    "widget");
_MTL_PRIVATE_DEF_SEL(spinWithCount_mode_error_,
    "spinWithCount:mode:error:");
_MTL_PRIVATE_DEF_SEL(elapsed,
    "elapsed");
_MTL_PRIVATE_DEF_SEL(readTicks_,
    "readTicks:");

extern "C" MTL::Widget* MTLCreateWidget(NS::UInteger count);

// static method: widget
_MTL_INLINE MTL::Widget* MTL::Widget::widget()
{
    return Object::sendMessage<MTL::Widget*>(_MTL_PRIVATE_CLS(MTLWidget), _MTL_PRIVATE_SEL(widget));
}

// method: spinWithCount:mode:error:
_MTL_INLINE void MTL::Widget::spinWithCount(NS::UInteger count, MTL::WidgetMode mode, NS::Error** error)
{
    Object::sendMessage<void>(this, _MTL_PRIVATE_SEL(spinWithCount_mode_error_), count, mode, error);
}

// property: elapsed
_MTL_INLINE double MTL::Widget::elapsed() const
{
    return Object::sendMessage<double>(this, _MTL_PRIVATE_SEL(elapsed));
}

// method: readTicks:
_MTL_INLINE void MTL::Widget::readTicks(MTL::Tick* ticks)
{
    Object::sendMessage<void>(this, _MTL_PRIVATE_SEL(readTicks_), ticks);
}
